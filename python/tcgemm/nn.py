"""nn.Linear on tcgemm, and a model's linear layers moved onto it.

    layer = tcgemm.nn.Linear(4096, 11008, bias=False, dtype=torch.bfloat16, device="cuda")
    model = tcgemm.patch_linear(model)    # every nn.Linear -> tcgemm.nn.Linear (same Parameters), in place
    tcgemm.unpatch_linear(model)          # and back

`Linear` is a torch.nn.Linear (same parameters, state_dict keys and
initialization) whose forward is `tcgemm.linear`, with an optional fused
activation. Under torch.autocast("cuda") a float32 layer runs on tcgemm
in the autocast dtype, as torch's own linear does. Calls tcgemm cannot
take (float32 outside autocast, CPU tensors) run
torch.nn.functional.linear instead and are counted in `Linear.fallbacks`,
with a warning the first time: no eager call falls back silently. Calls
traced by torch.compile or torch.export are neither counted nor warned
about (a Python int changing on every call would make torch recompile the
graph each time, and a warning cannot be traced): their graphs hold
aten.linear instead of tcgemm.linear. Meta tensors count as CUDA ones, so
a model exported on the meta device gets tcgemm's operator.
"""

from __future__ import annotations

import collections
import warnings

import torch

from . import _ops

__all__ = ["Linear", "patch_linear", "unpatch_linear"]

# Activation modules a patch may fuse into the linear layer before them, by
# the name tcgemm.linear takes (gelu: by its `approximate` argument).
_FUSIBLE = {torch.nn.ReLU: "relu", torch.nn.SiLU: "silu", torch.nn.GELU: "gelu"}

_HALF = (torch.float16, torch.bfloat16)  # the dtypes tcgemm computes in
_PROXY = torch.fx.Proxy  # (bound once: Linear.forward tests every input for it)
_FLOAT = (torch.float32, *_HALF)  # the dtypes torch.autocast casts to one of _HALF


def _activation_name(module: torch.nn.Module) -> str | None:
    for kind, name in _FUSIBLE.items():
        if type(module) is kind:
            if kind is torch.nn.GELU and module.approximate == "tanh":
                return "gelu_tanh"
            return name
    return None


def _activation_arg(activation: str | None) -> str | None:
    """The activation a Linear keeps: None for none (also spelled "none")."""
    if activation not in _ops.ACTIVATIONS:
        raise ValueError(f"tcgemm.nn.Linear: unknown activation {activation!r}")
    return None if activation == "none" else activation


def _has_hooks(module: torch.nn.Module) -> bool:
    """Whether the module has hooks of its own that see its input, output or gradients."""
    return any(getattr(module, name, None) for name in ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks",
                                                         "_backward_pre_hooks"))


def _runs_in_order(parent: torch.nn.Module) -> bool:
    """Whether parent is a Sequential whose forward is nn.Sequential's (its
    class's, and none set on the instance): each child's output is the next
    child's input, and nothing else's."""
    return (isinstance(parent, torch.nn.Sequential) and type(parent).forward is torch.nn.Sequential.forward
            and "forward" not in parent.__dict__)


def _reference_activation(y: torch.Tensor, activation: str | None) -> torch.Tensor:
    if activation is None:
        return y
    if activation == "relu":
        return torch.nn.functional.relu(y)
    if activation == "silu":
        return torch.nn.functional.silu(y)
    return torch.nn.functional.gelu(y, approximate="tanh" if activation == "gelu_tanh" else "none")


class Linear(torch.nn.Linear):
    """torch.nn.Linear computed by tcgemm: y = act(x @ weight^T + bias)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None,
                 activation: str | None = None) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = _activation_arg(activation)
        self.fallbacks = 0  # calls run by torch.nn.functional.linear (tensors tcgemm cannot take)

    @classmethod
    def from_linear(cls, layer: torch.nn.Linear, activation: str | None = None) -> Linear:
        """A tcgemm Linear with `layer`'s state, shared, not copied: the same
        Parameter objects (and parameter and buffer dicts), its hooks, its
        training mode and any attribute set on it; only the forward differs.
        A layer whose forward is replaced on the instance (by a library's
        hooks, e.g. for offloading) is refused: what it does around the
        product is unknown here, and so is a subclass of torch.nn.Linear (a
        LoRA or quantized layer), whose forward is its own. A compiled
        layer's compiled call is not carried over (it calls the original
        layer): compile the new one. `activation` is the new layer's, also
        where `layer` is a tcgemm Linear with one of its own."""
        activation = _activation_arg(activation)
        if not isinstance(layer, torch.nn.Linear):
            raise TypeError(f"tcgemm.nn.Linear.from_linear: {type(layer).__name__} is not a torch.nn.Linear; "
                            "only torch.nn.Linear converts")
        if type(layer) not in (torch.nn.Linear, cls):
            raise TypeError(f"tcgemm.nn.Linear.from_linear: {type(layer).__name__} is a subclass of torch.nn.Linear "
                            "with a forward of its own, which tcgemm's would drop; only torch.nn.Linear converts")
        if "forward" in layer.__dict__:
            raise ValueError("tcgemm.nn.Linear.from_linear: the layer's forward is replaced on the instance "
                             f"({layer.__dict__['forward']!r}); tcgemm cannot tell what it does around the product")
        new = cls.__new__(cls)
        new.__dict__.update(layer.__dict__)
        if "_compiled_call_impl" in new.__dict__:
            new._compiled_call_impl = None  # (Module.compile's, of the original layer)
        new.activation = activation
        new.fallbacks = 0
        return new

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # The parameters read once (each read goes through nn.Module.__getattr__) and the cheapest
        # checks first: a decoding step calls this for every layer, and pays its host time.
        weight, bias = self.weight, self.bias
        if isinstance(x, _PROXY):
            # torch.fx.symbolic_trace (which traces into this module: only torch's own are its leaves):
            # the graph calls tcgemm's operator, which refuses at run time what it cannot take.
            return _ops.linear_op(x, weight, bias, _ops.ACTIVATIONS[self.activation])
        dtype = x.dtype
        # (Meta tensors as CUDA ones: a model exported or traced on the meta device, as large models
        # are, gets tcgemm's operator in its graph, whose fake implementation gives the result's shape.)
        if (dtype == weight.dtype and dtype in _HALF and (x.is_cuda or x.is_meta) and x.device == weight.device
                and (bias is None or bias.dtype in (dtype, torch.float32))):
            return _ops.linear_op(x, weight, bias, _ops.ACTIVATIONS[self.activation])
        if (x.is_cuda and x.device == weight.device and torch.is_autocast_enabled("cuda")
                and dtype in _FLOAT and weight.dtype in _FLOAT and (bias is None or bias.dtype in _FLOAT)):
            # Under torch.autocast the op casts every operand to the autocast dtype (csrc/ops.cpp).
            return _ops.linear_op(x, weight, bias, _ops.ACTIVATIONS[self.activation])
        # (Not while compiling: a warning cannot be traced, and a count that
        # changes on every call fails the graph's guard on it, so the graph
        # would be compiled again on every call.)
        if not torch.compiler.is_compiling():
            if self.fallbacks == 0:
                warnings.warn(f"tcgemm.nn.Linear: {x.dtype} {x.device} input (weight {weight.dtype} "
                              f"{weight.device}) is not for tcgemm; running torch.nn.functional.linear",
                              stacklevel=2)
            self.fallbacks += 1
        return _reference_activation(torch.nn.functional.linear(x, weight, bias), self.activation)

    def extra_repr(self) -> str:
        return super().extra_repr() + (f", activation={self.activation}" if self.activation else "")


class _Patch:
    """What patch_linear changed, so that unpatch_linear can put it back."""

    def __init__(self) -> None:
        # (parent, name, original, installed): the module put in parent's slot `name` in place of `original`.
        self.swaps: list[tuple[torch.nn.Module, str, torch.nn.Module, torch.nn.Module]] = []


def patch_linear(model: torch.nn.Module, activation_fusion: bool = True) -> torch.nn.Module:
    """Replaces every torch.nn.Linear inside `model` (in place) by a tcgemm
    Linear with its state (Linear.from_linear: the same parameters, hooks and
    training mode). A Linear used in several places becomes one tcgemm Linear
    in all of them. With activation_fusion, an activation module (ReLU, SiLU,
    GELU) that directly follows a Linear inside an nn.Sequential (whose
    forward is Sequential's own), and so is certainly applied to its output
    alone, is fused into it and replaced by nn.Identity; not into a Linear
    used in several places, whose other uses are not followed by it, nor
    where either has hooks of its own. A fused Linear's output is then the
    activation's: code that calls the layer alone, or slices the Sequential
    after it (model[:1]), for the features before the activation gets them
    after it; pass activation_fusion=False for such models. A Linear whose
    forward is replaced on the instance stays as it is (with a warning).
    Returns the model; unpatch_linear undoes it. A
    bare nn.Linear is refused (it has no parent to swap it in):
    tcgemm.nn.Linear.from_linear(layer) converts one layer. So is the wrapper
    torch.compile returns, whose compiled code would keep calling the
    original modules: patch first, then compile."""
    if type(model) is torch.nn.Linear:
        raise ValueError("tcgemm.patch_linear: the model is itself an nn.Linear, which cannot be replaced in place; "
                         "use tcgemm.nn.Linear.from_linear(layer)")
    if _is_compiled_wrapper(model):
        raise ValueError("tcgemm.patch_linear: the model is torch.compile's wrapper, whose compiled code keeps "
                         "calling the modules it was made from; patch the model first, then compile it: "
                         "torch.compile(tcgemm.patch_linear(model))")
    patch = getattr(model, "_tcgemm_patch", None) or _Patch()
    # Every place a module is held, the same module in several places included
    # (named_children lists a module once per parent).
    places = [(parent, name, child) for parent in list(model.modules())
              for name, child in list(parent._modules.items()) if child is not None]
    uses = collections.Counter(id(child) for _, _, child in places)
    converted: dict[int, Linear] = {}  # a shared Linear's tcgemm Linear, made once
    for parent, name, child in places:
        if type(child) is not torch.nn.Linear:
            continue
        if "forward" in child.__dict__:
            warnings.warn(f"tcgemm.patch_linear: {name} ({child}) keeps torch's linear: its forward is replaced on "
                          "the instance (a library's hooks), which tcgemm cannot tell the effect of", stacklevel=2)
            continue
        activation = None
        # (Not a Linear or an activation with hooks of their own: fused, the
        # Linear's would see the activation's output, the activation's would
        # not run.)
        if activation_fusion and uses[id(child)] == 1 and _runs_in_order(parent) and not _has_hooks(child):
            names = list(parent._modules)
            index = names.index(name)
            if index + 1 < len(names):
                next_name = names[index + 1]
                next_child = parent._modules[next_name]
                hooked = next_child is not None and _has_hooks(next_child)
                activation = None if next_child is None or hooked else _activation_name(next_child)
                if activation is not None:
                    identity = torch.nn.Identity().train(next_child.training)
                    patch.swaps.append((parent, next_name, next_child, identity))
                    setattr(parent, next_name, identity)
        if activation is None:
            if id(child) not in converted:
                converted[id(child)] = Linear.from_linear(child)
            new = converted[id(child)]
        else:
            new = Linear.from_linear(child, activation)
        patch.swaps.append((parent, name, child, new))
        setattr(parent, name, new)
    model._tcgemm_patch = patch
    return model


def _is_compiled_wrapper(model: torch.nn.Module) -> bool:
    # torch.compile(module) returns an OptimizedModule holding the module as
    # _orig_mod (a private class: by name, so no import of torch._dynamo).
    return type(model).__name__ == "OptimizedModule" and isinstance(getattr(model, "_orig_mod", None), torch.nn.Module)


# What a tcgemm Linear holds that its original must not take back.
_OWN_STATE = ("activation", "fallbacks", "_compiled_call_impl")


def _undo(module: torch.nn.Module) -> None:
    patch = module.__dict__.get("_tcgemm_patch")
    if patch is None:
        return
    # Refused before anything changes: a layer whose class was changed since
    # (torch.nn.utils.parametrize, weight_norm, spectral_norm) moved its
    # weight out of the parameter dict it shares with the original; one whose
    # forward was replaced since (a library's hooks, e.g. for offloading)
    # holds a forward bound to the tcgemm layer, which the original would run.
    for parent, name, original, installed in patch.swaps:
        if parent._modules.get(name) is not installed or not isinstance(installed, Linear):
            continue
        if type(installed) is not Linear:
            raise RuntimeError(f"tcgemm.unpatch_linear: {name} became a {type(installed).__name__} after patching "
                               "(a parametrization, e.g. weight_norm, moved its weight); remove it first "
                               "(torch.nn.utils.parametrize.remove_parametrizations), then unpatch")
        if "forward" in installed.__dict__:
            raise RuntimeError(f"tcgemm.unpatch_linear: {name}'s forward was replaced on the instance after patching "
                               "(a library's hooks); remove them first, then unpatch")
    del module.__dict__["_tcgemm_patch"]
    for parent, name, original, installed in reversed(patch.swaps):
        current = parent._modules.get(name)
        if current is not installed:
            # Replaced since (a LoRA wrapper, another patch): theirs stays.
            warnings.warn(f"tcgemm.unpatch_linear: {name} was replaced after patching (by a "
                          f"{type(current).__name__}); left as it is", stacklevel=3)
            continue
        if isinstance(installed, Linear):
            # What was set on the layer in the model since goes back with the
            # original: its training mode, hooks' flags, attributes (the
            # parameter, buffer, module and hook dicts are shared already).
            original.__dict__.update({k: v for k, v in installed.__dict__.items() if k not in _OWN_STATE})
        else:
            original.training = installed.training  # (the fused activation's Identity: the mode it was put in)
        setattr(parent, name, original)


def unpatch_linear(model: torch.nn.Module) -> torch.nn.Module:
    """Puts back what patch_linear replaced (the same module objects, in the
    training mode the model is in now), in `model` and in any of its
    submodules patched on their own."""
    _undo(model)
    for module in list(model.modules()):
        _undo(module)
    return model
