"""tcgemm.nn's patching logic on CPU: which Linears are converted, which
activations are fused into them, and what unpatch_linear puts back. The
module is loaded with a stand-in for the compiled operators: CPU tensors
never reach them (tcgemm.nn.Linear runs torch's linear for tensors tcgemm
cannot take, applying its fused activation itself), so every decision the
patch makes shows in the model's outputs and hooks here as on a GPU.
No GPU and no compiled library needed; skipped without torch.
"""

from __future__ import annotations

import importlib.util
import sys
import types
import warnings

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _load_nn() -> types.ModuleType:
    """tcgemm/nn.py in a package of its own whose _ops has the real
    activation names and an operator that fails if it is ever reached."""
    package = "tcgemm_nn_on_cpu"
    if f"{package}.nn" in sys.modules:
        return sys.modules[f"{package}.nn"]
    pkg = types.ModuleType(package)
    pkg.__path__ = []
    sys.modules[package] = pkg
    spec = importlib.util.spec_from_file_location(f"{package}._activations", PACKAGE_DIR / "_activations.py")
    activations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(activations)
    ops = types.ModuleType(f"{package}._ops")
    ops.ACTIVATIONS = activations.ACTIVATIONS

    def linear_op(*args, **kwargs):
        raise AssertionError("a CPU tensor reached tcgemm's operator")

    ops.linear_op = linear_op
    sys.modules[ops.__name__] = ops
    pkg._ops = ops
    spec = importlib.util.spec_from_file_location(f"{package}.nn", PACKAGE_DIR / "nn.py")
    nn = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = nn
    spec.loader.exec_module(nn)
    return nn


tnn = _load_nn()


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    # Every CPU call falls back with a warning: expected here.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not for tcgemm.*")
        yield


def _types(model: torch.nn.Module) -> list[str]:
    return [type(m).__name__ + ("(tcgemm)" if isinstance(m, tnn.Linear) else "") for m in model]


def test_an_activation_after_a_plain_linear_is_fused() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.SiLU(), torch.nn.Linear(32, 8))
    x = torch.randn(5, 16)
    want = model(x)
    tnn.patch_linear(model)
    assert _types(model) == ["Linear(tcgemm)", "Identity", "Linear(tcgemm)"]
    assert model[0].activation == "silu" and model[2].activation is None
    torch.testing.assert_close(model(x), want)


def test_a_linear_with_hooks_keeps_its_activation_apart() -> None:
    # A forward hook sees the Linear's own output; fused, it would see the
    # activation's, and a hook that replaces the output would run after it.
    torch.manual_seed(1)
    lin = torch.nn.Linear(16, 32)
    model = torch.nn.Sequential(lin, torch.nn.ReLU())
    seen = []
    lin.register_forward_hook(lambda module, inputs, output: seen.append(output.detach().clone()))
    lin.register_forward_hook(lambda module, inputs, output: output - 1.0)
    x = torch.randn(4, 16)
    want = model(x)
    tnn.patch_linear(model)
    assert _types(model) == ["Linear(tcgemm)", "ReLU"] and model[0].activation is None
    got = model(x)
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(seen[-1], F.linear(x, lin.weight, lin.bias))
    assert (got == 0).any() and (seen[-1] < 0).any()  # the hook's value is the one before the ReLU


@pytest.mark.parametrize("hook", ["forward_pre", "full_backward", "full_backward_pre"])
def test_an_activation_with_hooks_is_not_fused(hook) -> None:
    relu = torch.nn.ReLU()
    calls = []
    register = getattr(relu, f"register_{hook}_hook")
    register(lambda *args: calls.append(hook))
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), relu)
    tnn.patch_linear(model)
    assert model[1] is relu and model[0].activation is None
    x = torch.randn(3, 8, requires_grad=True)
    model(x).sum().backward()
    assert calls  # it still runs


def test_a_sequential_with_its_own_forward_is_not_fused() -> None:
    class Residual(torch.nn.Sequential):
        def forward(self, x):
            return self[1](x) + self[0](x)

    torch.manual_seed(2)
    model = Residual(torch.nn.Linear(8, 8), torch.nn.ReLU())
    x = torch.randn(6, 8)
    want = model(x)
    tnn.patch_linear(model)
    assert _types(model) == ["Linear(tcgemm)", "ReLU"]
    torch.testing.assert_close(model(x), want)


def test_none_is_no_activation() -> None:
    torch.manual_seed(3)
    layer = tnn.Linear(8, 4, activation="none")
    assert layer.activation is None
    x = torch.randn(2, 8)
    torch.testing.assert_close(layer(x), F.linear(x, layer.weight, layer.bias))
    other = tnn.Linear.from_linear(torch.nn.Linear(8, 4), "none")
    assert other.activation is None
    with pytest.raises(ValueError, match="unknown activation"):
        tnn.Linear(8, 4, activation="tanh")


def test_a_compiled_layer_runs_the_new_forward() -> None:
    # Module.compile keeps a compiled call of the original layer on the
    # instance; carried over, the patched layer would run the original's
    # forward and drop the fused activation.
    torch.manual_seed(4)
    lin = torch.nn.Linear(8, 8)
    lin.compile(backend="eager")
    model = torch.nn.Sequential(lin, torch.nn.ReLU())
    x = torch.randn(5, 8)
    want = F.relu(F.linear(x, lin.weight, lin.bias))
    tnn.patch_linear(model)
    assert model[0].activation == "relu" and type(model[1]) is torch.nn.Identity
    assert getattr(model[0], "_compiled_call_impl", None) is None
    torch.testing.assert_close(model(x), want)
    assert model[0].fallbacks == 1  # its own forward ran


@pytest.mark.parametrize("bare", [True, False])
def test_the_wrapper_torch_compile_returns_is_refused(bare: bool) -> None:
    # Its compiled code calls the modules it was made from: swapped inside
    # it, a bare Linear would never run tcgemm's forward, silently. Patch
    # first, then compile.
    inner = torch.nn.Linear(8, 8) if bare else torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    compiled = torch.compile(inner, backend="eager")
    with pytest.raises(ValueError, match="patch the model first, then compile it"):
        tnn.patch_linear(compiled)
    assert type(inner if bare else inner[0]) is torch.nn.Linear  # nothing changed
    torch.manual_seed(8)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    x = torch.randn(2, 8)
    want = model(x)
    compiled = torch.compile(tnn.patch_linear(model), backend="eager")
    torch.testing.assert_close(compiled(x), want)
    assert type(model[0]) is tnn.Linear and model[0].activation == "relu"  # what the compiled code ran


def test_a_layer_whose_forward_was_replaced_is_left_alone() -> None:
    torch.manual_seed(5)
    lin = torch.nn.Linear(8, 8)
    original = lin.forward
    lin.forward = lambda x: original(x) * 2.0  # as a library's hooks do (e.g. offloading)
    model = torch.nn.Sequential(lin, torch.nn.ReLU())
    x = torch.randn(3, 8)
    want = model(x)
    with pytest.warns(UserWarning, match="forward is replaced on the instance"):
        tnn.patch_linear(model)
    assert model[0] is lin and type(model[1]) is torch.nn.ReLU
    torch.testing.assert_close(model(x), want)
    with pytest.raises(ValueError, match="forward is replaced on the instance"):
        tnn.Linear.from_linear(lin)


def test_unpatch_puts_back_the_modules_in_the_current_mode() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.GELU(), torch.nn.Linear(8, 8))
    originals = list(model)
    tnn.patch_linear(model)
    model.eval()
    tnn.unpatch_linear(model)
    assert list(model) == originals
    assert not any(m.training for m in model.modules())
    model.train()
    tnn.patch_linear(model)
    assert all(m.training for m in model.modules())


def test_unpatch_undoes_a_submodule_patched_on_its_own() -> None:
    inner = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    model = torch.nn.Sequential(inner, torch.nn.Linear(8, 4))
    originals = [inner[0], inner[1], model[1]]
    tnn.patch_linear(inner)
    tnn.patch_linear(model)
    assert isinstance(inner[0], tnn.Linear) and isinstance(model[1], tnn.Linear)
    tnn.unpatch_linear(model)
    assert [inner[0], inner[1], model[1]] == originals


def test_a_fallback_warns_once_and_is_counted_every_time() -> None:
    layer = tnn.Linear(8, 4)
    x = torch.randn(3, 8)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(3):
            torch.testing.assert_close(layer(x), F.linear(x, layer.weight, layer.bias))
    assert len([w for w in seen if "is not for tcgemm" in str(w.message)]) == 1
    assert layer.fallbacks == 3


def test_a_fallback_inside_a_compiled_graph_compiles_once() -> None:
    # The count is not kept under compile: a Python int that changed on every
    # call failed the graph's guard on it, and the model was compiled again
    # each time (with fullgraph, an error at the recompile limit).
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
    tnn.patch_linear(model)
    compiled = torch.compile(model, backend="eager", fullgraph=True)
    x = torch.randn(3, 8)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for _ in range(12):
            torch.testing.assert_close(compiled(x), model(x))
    assert model[0].fallbacks == 12  # (the eager calls only)


class _Lora(torch.nn.Module):
    """A wrapper a library puts around a layer after it was patched."""

    def __init__(self, base: torch.nn.Module) -> None:
        super().__init__()
        self.base = base
        self.up = torch.nn.Linear(base.in_features, base.out_features, bias=False)

    def forward(self, x):
        return self.base(x) + self.up(x)


def test_unpatch_leaves_what_replaced_a_patched_layer_since() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 4))
    original = model[1]
    tnn.patch_linear(model)
    model[0] = _Lora(model[0])
    with pytest.warns(UserWarning, match="0 was replaced after patching"):
        tnn.unpatch_linear(model)
    assert type(model[0]) is _Lora and model[1] is original


def test_unpatch_carries_back_what_was_set_on_the_layer() -> None:
    torch.manual_seed(6)
    lin = torch.nn.Linear(8, 8)
    model = torch.nn.Sequential(lin)
    tnn.patch_linear(model)
    calls = []
    model[0].register_full_backward_hook(lambda *args: calls.append("full"))
    model[0].tag = "set after patching"
    tnn.unpatch_linear(model)
    assert model[0] is lin and lin.tag == "set after patching"
    assert not hasattr(lin, "activation") and not hasattr(lin, "fallbacks")
    lin(torch.randn(2, 8, requires_grad=True)).sum().backward()
    assert calls == ["full"]


def test_unpatch_refuses_a_layer_changed_since_and_changes_nothing() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 4))
    tnn.patch_linear(model)
    patched = list(model)
    torch.nn.utils.parametrizations.weight_norm(model[1])
    with pytest.raises(RuntimeError, match="remove_parametrizations"):
        tnn.unpatch_linear(model)
    assert list(model) == patched
    torch.nn.utils.parametrize.remove_parametrizations(model[1], "weight")
    tnn.unpatch_linear(model)
    assert all(type(m) is torch.nn.Linear for m in model)
    model(torch.randn(2, 8))
    # A forward replaced on the patched layer (a library's hooks) holds the tcgemm layer.
    tnn.patch_linear(model)
    forward = model[0].forward
    model[0].forward = lambda x: forward(x)
    with pytest.raises(RuntimeError, match="forward was replaced"):
        tnn.unpatch_linear(model)


def test_a_subclass_of_linear_is_not_converted() -> None:
    class Scaled(torch.nn.Linear):
        def forward(self, x):
            return super().forward(x) * 2.0

    with pytest.raises(TypeError, match="Scaled is a subclass of torch.nn.Linear"):
        tnn.Linear.from_linear(Scaled(8, 8))
    with pytest.raises(TypeError, match="Conv2d is not a torch.nn.Linear"):
        tnn.Linear.from_linear(torch.nn.Conv2d(1, 1, 1))
    model = torch.nn.Sequential(Scaled(8, 8), torch.nn.ReLU())
    tnn.patch_linear(model)
    assert type(model[0]) is Scaled and type(model[1]) is torch.nn.ReLU


def test_a_sequential_whose_forward_is_set_on_the_instance_is_not_fused() -> None:
    torch.manual_seed(7)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
    model.forward = lambda x: model[1](model[0](x) + x)
    x = torch.randn(4, 8)
    want = model(x)
    tnn.patch_linear(model)
    assert type(model[1]) is torch.nn.ReLU and model[0].activation is None
    torch.testing.assert_close(model(x), want)
