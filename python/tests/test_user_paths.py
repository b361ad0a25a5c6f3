"""More cases a user of tcgemm's PyTorch side meets that the other suites do
not reach (test_user_cases.py and test_views_and_edges.py hold the first
ones), each a check of a promise the docstrings make:

- a patched model copied (copy.deepcopy, pickle, torch.save / torch.load),
  its state_dict loaded both ways (also with assign=True, and a float32
  checkpoint into a bfloat16 tcgemm.nn.Linear), patched twice, cast or moved
  after patching: the copy is patched and independent, unpatch_linear puts
  back the copy's own modules with what was done to them since;
- only the bias requiring grad; activation checkpointing (both kinds) with
  the gradients of the plain run; torch.func.functional_call on a patched
  layer; bmm with only the weight-like operand requiring grad;
- alpha and beta NaN, +Inf and -0.0 through matmul on the kernel, the cuBLAS
  fallback and the K == 0 scale;
- opcheck of linear_out and grouped_mm; TorchScript calling the operators,
  and torch.jit.trace of a patched model;
- the first tcgemm calls of a fresh process made by twelve threads at once
  (every one-time setup racing), each with the bits of the same call made
  again later.

CPU tests (meta and CPU tensors: the patch, copies, state_dict, TorchScript
and checkpointing traced on meta) run without a GPU and need torch and the
installed package; the GPU tests skip without an sm_90 GPU.
"""

from __future__ import annotations

import copy
import io
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from conftest import bits, gpu_skip_reason, rand

torch = pytest.importorskip("torch")
tcgemm = pytest.importorskip("tcgemm")
F = torch.nn.functional

import tcgemm.nn  # noqa: E402

_GPU_SKIP = gpu_skip_reason()
gpu = pytest.mark.skipif(_GPU_SKIP is not None, reason=_GPU_SKIP or "")

NAN, INF = float("nan"), float("inf")
F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32


@pytest.fixture
def quiet_fallbacks():
    # On CPU every tcgemm.nn.Linear call runs torch's linear with a warning: expected in the CPU tests.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is not for tcgemm.*")
        yield


def _model(dtype=F32, device="cpu") -> torch.nn.Sequential:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8),
                               torch.nn.GELU(approximate="tanh"), torch.nn.Linear(8, 4, bias=False)).to(device, dtype)


def _kinds(model: torch.nn.Module) -> list[str]:
    return [("tcgemm." if isinstance(m, tcgemm.nn.Linear) else "") + type(m).__name__ for m in model]


PATCHED = ["tcgemm.Linear", "Identity", "tcgemm.Linear", "Identity", "tcgemm.Linear"]
UNPATCHED = ["Linear", "ReLU", "Linear", "GELU", "Linear"]


def _torch_save_load(model):
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


# ---------------------------------------------------------------------------------------------------------------
# Copies, state_dict, repeated patches (CPU)
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("copier", [copy.deepcopy, lambda m: pickle.loads(pickle.dumps(m)), _torch_save_load],
                         ids=["deepcopy", "pickle", "torch.save"])
def test_a_copied_patched_model_is_patched_independent_and_unpatches_on_its_own(copier, quiet_fallbacks) -> None:
    # A copy keeps the patch (fused activations included) and its record: unpatch_linear on the copy puts
    # back the copy's own torch modules, with what was done to the copy since (a cast, eval mode), and
    # leaves the source patched. The copy shares no storage with the source.
    model = tcgemm.patch_linear(_model())
    x = torch.randn(3, 16)
    want = model(x)
    dup = copier(model)
    assert _kinds(dup) == PATCHED and dup[0].activation == "relu" and dup[2].activation == "gelu_tanh"
    assert torch.equal(dup(x), want)
    for p_src, p_dup in zip(model.parameters(), dup.parameters()):
        assert p_src.data_ptr() != p_dup.data_ptr()
    with torch.no_grad():
        dup[0].weight.add_(1.0)
    assert torch.equal(model(x), want), "a change to the copy reached the source"
    dup.to(torch.float64).eval()
    tcgemm.unpatch_linear(dup)
    assert _kinds(dup) == UNPATCHED and all(type(m) is torch.nn.Linear for m in (dup[0], dup[2], dup[4]))
    assert dup[0].weight.dtype == torch.float64 and not dup.training and not dup[1].training
    assert not hasattr(dup[0], "activation") and not hasattr(dup, "_tcgemm_patch")
    # The restored layers hold the copy's parameters (changed above), not the source's.
    assert torch.equal(dup[0].weight, (model[0].weight + 1.0).double())
    xd = x.double()
    ref = dup[4](F.gelu(dup[2](F.relu(dup[0](xd))), approximate="tanh"))
    assert torch.equal(dup(xd), ref)
    assert _kinds(model) == PATCHED and torch.equal(model(x), want)
    tcgemm.unpatch_linear(model)
    assert _kinds(model) == UNPATCHED


def test_state_dict_round_trips_between_patched_and_plain_models(quiet_fallbacks) -> None:
    # The same keys (fused activations leave none); a plain checkpoint loads into the patched model and back,
    # strictly; load_state_dict(assign=True) on the patched model puts the checkpoint's tensors into the
    # parameter dicts the originals share, so unpatch_linear gives them back too.
    plain = _model()
    patched = tcgemm.patch_linear(_model())
    assert list(patched.state_dict()) == list(plain.state_dict())
    with torch.no_grad():
        for p in plain.parameters():
            p.mul_(-2.0)
    patched.load_state_dict(plain.state_dict())
    x = torch.randn(5, 16)
    assert torch.equal(patched(x), plain(x))
    fresh = _model()
    assert fresh.load_state_dict(patched.state_dict()).missing_keys == []
    assert torch.equal(fresh(x), plain(x))
    checkpoint = {k: v.clone() * 3 for k, v in plain.state_dict().items()}
    patched.load_state_dict(checkpoint, assign=True)
    assert patched[0].weight.data_ptr() == checkpoint["0.weight"].data_ptr()
    tcgemm.unpatch_linear(patched)
    assert type(patched[0]) is torch.nn.Linear and patched[0].weight.data_ptr() == checkpoint["0.weight"].data_ptr()
    by_hand = _model()
    by_hand.load_state_dict(checkpoint)
    assert torch.equal(patched(x), by_hand(x))


def test_a_float32_checkpoint_loads_into_a_bfloat16_tcgemm_linear(quiet_fallbacks) -> None:
    # nn.Linear's own conversion on load: the values rounded to the layer's dtype, the layer's dtype kept.
    source = torch.nn.Linear(16, 8)
    layer = tcgemm.nn.Linear(16, 8, dtype=BF16, activation="silu")
    layer.load_state_dict(source.state_dict())
    assert layer.weight.dtype == BF16 and torch.equal(layer.weight, source.weight.detach().to(BF16))
    assert torch.equal(layer.bias, source.bias.detach().to(BF16)) and layer.activation == "silu"


def test_patching_twice_is_patching_once_and_unpatch_restores_the_same_objects(quiet_fallbacks) -> None:
    model = _model()
    originals = list(model)
    tcgemm.patch_linear(model)
    first = list(model)
    tcgemm.patch_linear(model)  # nothing left to convert: the same modules, one record
    assert list(model) == first and len(model._tcgemm_patch.swaps) == 5
    model.to(torch.float64)  # after patching: the originals share the cast parameters
    tcgemm.unpatch_linear(model)
    assert all(a is b for a, b in zip(model, originals))
    assert originals[0].weight.dtype == torch.float64 and originals[4].weight.dtype == torch.float64
    assert tcgemm.unpatch_linear(model) is model and list(model) == originals  # a second unpatch: nothing to undo


# ---------------------------------------------------------------------------------------------------------------
# TorchScript and activation checkpointing, traced on meta tensors (CPU)
# ---------------------------------------------------------------------------------------------------------------

def test_torchscript_calls_the_operators_by_their_schemas() -> None:
    # The operators are registered with schemas, so scripted code calls them (the Python wrappers
    # tcgemm.matmul / tcgemm.linear are not scriptable: they check arguments in Python). Meta tensors give
    # the shapes the fake implementations promise.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # (torch.jit is deprecated in recent torch)

        @torch.jit.script
        def block(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
            h = torch.ops.tcgemm.linear(x, w, b, 4)
            h = torch.ops.tcgemm.mm(h, w, 0.5)
            return torch.ops.tcgemm.bmm(h.unsqueeze(0).expand(3, -1, -1), keys.transpose(1, 2))

    graph = str(block.graph)
    for op in ("tcgemm::linear", "tcgemm::mm", "tcgemm::bmm"):
        assert op in graph, graph
    meta = dict(device="meta", dtype=BF16)
    y = block(torch.empty(5, 16, **meta), torch.empty(16, 16, **meta), torch.empty(16, device="meta", dtype=F32),
              torch.empty(3, 9, 16, **meta))
    assert y.shape == (3, 5, 9) and y.dtype == BF16


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpointed_block_traces_its_backward_on_meta(use_reentrant) -> None:
    # torch.utils.checkpoint recomputes the forward in the backward; the saved tensors of tcgemm's autograd
    # Functions (an undefined one where there is no bias) must match between the two runs.
    from torch.utils.checkpoint import checkpoint

    meta = dict(device="meta", dtype=BF16)
    w1 = torch.empty(32, 16, **meta, requires_grad=True)
    b1 = torch.empty(32, device="meta", dtype=F32, requires_grad=True)
    w2 = torch.empty(8, 32, **meta, requires_grad=True)
    keys = torch.empty(2, 6, 8, **meta, requires_grad=True)

    def block(x):
        h = tcgemm.linear(x, w1, b1, "silu")
        y = tcgemm.linear(h, w2)
        return tcgemm.bmm(y.unsqueeze(0).expand(2, -1, -1), keys.transpose(1, 2))

    x = torch.empty(4, 16, **meta, requires_grad=True)
    y = checkpoint(block, x, use_reentrant=use_reentrant)
    assert y.shape == (2, 4, 6)
    y.backward(torch.empty_like(y))
    for t in (x, w1, b1, w2, keys):
        assert t.grad is not None and t.grad.shape == t.shape and t.grad.dtype == t.dtype


# ---------------------------------------------------------------------------------------------------------------
# Gradients (GPU)
# ---------------------------------------------------------------------------------------------------------------

@gpu
@pytest.mark.parametrize("bias_dtype", [F32, BF16], ids=["f32", "bf16"])
@pytest.mark.parametrize("activation", [None, "relu"])
@pytest.mark.parametrize("shape", [(3, 5, 64), (64,), (0, 64)], ids=["3d", "1d", "no-rows"])
def test_only_the_bias_requires_grad(shape, activation, bias_dtype) -> None:
    # A frozen layer with a trainable bias (bias tuning): the bias gets the sum of the rows of the gradient
    # (through relu's mask where fused), x and the weight none. Small integers: exact, so equal to float64.
    x = rand(*shape, dtype=BF16, seed=301, ints=True)
    w = rand(24, 64, dtype=BF16, seed=302, ints=True)
    b = rand(24, dtype=bias_dtype, seed=303, ints=True).requires_grad_()
    y = tcgemm.linear(x, w, b, activation)
    assert y.requires_grad and y.grad_fn is not None
    g = rand(*y.shape, dtype=BF16, seed=304, ints=True) if y.numel() else torch.empty_like(y)
    y.backward(g)
    bd = b.detach().double().requires_grad_()
    ref = F.linear(x.double(), w.double(), bd)
    if activation == "relu":
        ref = F.relu(ref)
    ref.backward(g.double())
    assert x.grad is None and w.grad is None
    assert b.grad is not None and b.grad.dtype == bias_dtype and b.grad.shape == (24,)
    assert torch.equal(b.grad, bd.grad.to(bias_dtype)), (b.grad, bd.grad)
    if y.numel():
        assert b.grad.abs().sum() > 0


@gpu
@pytest.mark.parametrize("use_reentrant", [False, True])
def test_activation_checkpointing_gives_the_plain_runs_gradients(use_reentrant) -> None:
    # The recomputed forward is the same tcgemm calls (deterministic), so every gradient has the bits of the
    # run without checkpointing.
    from torch.utils.checkpoint import checkpoint

    w1, b1 = rand(256, 128, dtype=BF16, seed=311), rand(256, dtype=F32, seed=312)
    w2 = rand(64, 256, dtype=BF16, seed=313)
    x0 = rand(2, 9, 128, dtype=BF16, seed=314)
    g = rand(2, 9, 64, dtype=BF16, seed=315)

    def block(x, w1, b1, w2):
        return tcgemm.linear(tcgemm.linear(x, w1, b1, "gelu"), w2, None, "silu")

    results = []
    for checkpointed in (False, True):
        leaves = [t.clone().requires_grad_() for t in (x0, w1, b1, w2)]
        y = checkpoint(block, *leaves, use_reentrant=use_reentrant) if checkpointed else block(*leaves)
        y.backward(g)
        results.append([bits(y)] + [bits(t.grad) if t.grad.dtype != F32 else t.grad.clone() for t in leaves])
    for i, (plain, ckpt) in enumerate(zip(*results)):
        assert torch.equal(plain, ckpt), i


@gpu
def test_functional_call_on_a_patched_layer_uses_the_given_parameters() -> None:
    layer = tcgemm.nn.Linear(64, 32, dtype=BF16, device="cuda", activation="relu")
    w = rand(32, 64, dtype=BF16, seed=321).requires_grad_()
    b = rand(32, dtype=BF16, seed=322).requires_grad_()
    x = rand(7, 64, dtype=BF16, seed=323)
    y = torch.func.functional_call(layer, {"weight": w, "bias": b}, (x,))
    assert torch.equal(bits(y), bits(tcgemm.linear(x, w.detach(), b.detach(), "relu")))
    y.float().sum().backward()
    assert w.grad is not None and b.grad is not None
    assert layer.weight.grad is None and layer.bias.grad is None and layer.fallbacks == 0


@gpu
def test_bmm_with_only_the_second_operand_requiring_grad_and_a_broadcast_first() -> None:
    # a expanded over the batch with stride 0 (one query for every head), frozen; b per head, trainable.
    a = rand(1, 6, 32, dtype=F16, seed=331, ints=True).expand(5, 6, 32)
    b = rand(5, 32, 24, dtype=F16, seed=332, ints=True).requires_grad_()
    g = rand(5, 6, 24, dtype=F16, seed=333, ints=True)
    tcgemm.bmm(a, b).backward(g)
    bd = b.detach().double().requires_grad_()
    torch.bmm(a.double(), bd).backward(g.double())
    assert torch.equal(b.grad, bd.grad.to(F16))


# ---------------------------------------------------------------------------------------------------------------
# A patched model cast and moved, copied on the GPU
# ---------------------------------------------------------------------------------------------------------------

@gpu
def test_patch_first_then_move_and_cast_runs_on_tcgemm_and_copies_agree() -> None:
    # The common order: build on the CPU in float32, patch, then .to("cuda", bfloat16). Every layer then
    # runs on tcgemm (no fallback, no warning), with the bits of the calls made by hand; a deepcopy gives
    # the same bits, and unpatched it gives torch's own.
    model = tcgemm.patch_linear(_model()).to("cuda", BF16)
    x = rand(6, 16, dtype=BF16, seed=341)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = model(x)
    assert all(m.fallbacks == 0 for m in model if isinstance(m, tcgemm.nn.Linear))
    h = tcgemm.linear(x, model[0].weight, model[0].bias, "relu")
    h = tcgemm.linear(h, model[2].weight, model[2].bias, "gelu_tanh")
    assert torch.equal(bits(y), bits(tcgemm.linear(h, model[4].weight)))
    dup = copy.deepcopy(model)
    assert torch.equal(bits(dup(x)), bits(y))
    tcgemm.unpatch_linear(dup)
    want = F.linear(F.gelu(F.linear(F.relu(F.linear(x, dup[0].weight, dup[0].bias)), dup[2].weight, dup[2].bias),
                           approximate="tanh"), dup[4].weight)
    assert torch.equal(dup(x), want)
    assert torch.equal(bits(model(x)), bits(y))


# ---------------------------------------------------------------------------------------------------------------
# alpha and beta NaN, +Inf and -0.0 through matmul
# ---------------------------------------------------------------------------------------------------------------

def _nonfinite_operands(path: str):
    f = dict(dtype=F16, ints=True)
    if path == "scale":
        return torch.empty(48, 0, device="cuda", dtype=F16), torch.empty(0, 40, device="cuda", dtype=F16)
    a = rand(48 * 64 + 1, seed=351, **f)[1:].view(48, 64) if path == "cublas" else rand(48, 64, seed=351, **f)
    return a, rand(64, 40, seed=352, **f)


@gpu
@pytest.mark.parametrize("path", ["kernel", "cublas", "scale"])
def test_nonfinite_and_signed_zero_alpha_beta(path) -> None:
    # out = alpha * a @ b + beta * out in fp32, IEEE: beta NaN poisons every element (out is read, beta != 0);
    # beta +Inf gives NaN where out held 0 and +-Inf elsewhere (the product is finite); alpha NaN poisons
    # every element where there is a product (K > 0); alpha +Inf gives NaN where the exact sum is 0 and
    # +-Inf elsewhere (tcgemm's kernel: cuBLAS's numbers are its own); alpha -0.0 is 0: a and b are not read
    # (NaN in a does not reach out) and out = beta * out exactly.
    a, b = _nonfinite_operands(path)
    plan = tcgemm.plan(a, b)
    assert plan.path == {"kernel": "kernel", "cublas": "cublas", "scale": "scale"}[path], plan
    out0 = rand(48, 40, dtype=F16, seed=353, ints=True)  # (about a fifth zeros)
    assert (out0 == 0).any() and (out0 > 0).any() and (out0 < 0).any()
    exact = a.double() @ b.double()

    def run(alpha, beta):
        out = out0.clone()
        assert tcgemm.matmul(a, b, out=out, alpha=alpha, beta=beta) is out
        return out

    def same_pattern(got, want, what):
        for name, test in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
            assert torch.equal(test(got), test(want)), f"{path}, {what}: the {name} elements differ"
        assert torch.isfinite(want).sum() == 0 or torch.equal(got[torch.isfinite(want)], want[torch.isfinite(want)])

    assert torch.isnan(run(1.0, NAN)).all()
    same_pattern(run(1.0, INF), out0.double() * INF, "beta +Inf")
    if path != "scale":
        assert torch.isnan(run(NAN, 0.0)).all()
        assert torch.isnan(tcgemm.matmul(a, b, alpha=NAN)).all()
    if path == "kernel":
        same_pattern(run(INF, 0.0), exact * INF, "alpha +Inf")
    a_nan = torch.full_like(a, NAN) if a.numel() else a
    assert tcgemm.plan(a_nan, b, out0.clone(), alpha=-0.0, beta=2.0).path == "scale"
    got = tcgemm.matmul(a_nan, b, out=out0.clone(), alpha=-0.0, beta=2.0)
    assert torch.equal(bits(got), bits(out0 * 2))


# ---------------------------------------------------------------------------------------------------------------
# opcheck, torch.jit.trace (GPU)
# ---------------------------------------------------------------------------------------------------------------

@gpu
def test_opcheck_linear_out_and_grouped_mm() -> None:
    # Schemas (linear_out mutates out), fake implementations and the aot dispatch of the two operators the
    # other suites do not opcheck. (grouped_mm's offs cover every row: rows past the last end are left
    # uninitialized, which opcheck's comparisons would read.)
    x = rand(37, 128, dtype=BF16, seed=361)
    w = rand(96, 128, dtype=BF16, seed=362)
    b = rand(96, dtype=F32, seed=363)
    out = torch.empty(37, 96, device="cuda", dtype=BF16)
    torch.library.opcheck(torch.ops.tcgemm.linear_out.default, (x, w, b, 4, out))
    torch.library.opcheck(torch.ops.tcgemm.linear_out.default, (x, w, None, 0, out))
    a = rand(64, 64, dtype=BF16, seed=364)
    experts = rand(3, 64, 32, dtype=BF16, seed=365)
    offs = torch.tensor([10, 10, 64], device="cuda", dtype=torch.int32)
    torch.library.opcheck(torch.ops.tcgemm.grouped_mm.default, (a, experts, offs))


@gpu
def test_jit_trace_of_a_patched_model_records_the_operator() -> None:
    model = tcgemm.patch_linear(_model()).to("cuda", BF16).eval()
    x = rand(4, 16, dtype=BF16, seed=371)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        traced = torch.jit.trace(model, (x,))
        graph = str(traced.inlined_graph)
        assert graph.count("tcgemm::linear") == 3 and "aten::linear" not in graph, graph
        x2 = rand(9, 16, dtype=BF16, seed=372)
        assert torch.equal(bits(traced(x2)), bits(model(x2)))


# ---------------------------------------------------------------------------------------------------------------
# The first calls of a fresh process, from many threads at once
# ---------------------------------------------------------------------------------------------------------------

_FIRST_CALLS = r'''
import sys, threading
sys.path.insert(0, sys.argv[1])
import torch
import tcgemm
from conftest import assert_within_bound, bits, mm_reference, rand

F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
# Inputs made before any tcgemm call (torch's CUDA context and streams are set up here, tcgemm's are not).
a0, b0 = rand(256, 512, dtype=BF16, seed=1), rand(512, 256, dtype=BF16, seed=2)
a1, b1 = rand(33, 520, dtype=F16, seed=3), rand(1000, 520, dtype=F16, seed=4).t()
a2, b2 = rand(64, 300, dtype=BF16, seed=5).t(), rand(64, 200, dtype=BF16, seed=6)
a3, b3 = rand(64 * 64 + 1, dtype=F16, seed=7, ints=True)[1:].view(64, 64), rand(64, 72, dtype=F16, seed=8, ints=True)
a4, b4 = rand(48, 67, dtype=BF16, seed=9, ints=True)[:, :64], rand(64, 40, dtype=BF16, seed=10, ints=True)
x5, w5, c5 = rand(5, 3, 100, dtype=BF16, seed=11), rand(33, 100, dtype=BF16, seed=12), rand(33, dtype=F32, seed=13)
x6, w6 = rand(1, 1024, dtype=BF16, seed=14), rand(4096, 1024, dtype=BF16, seed=15)
q7, k7 = rand(12, 7, 64, dtype=F16, seed=16), rand(12, 296, 64, dtype=F16, seed=17)
x8, e8 = rand(96, 64, dtype=BF16, seed=18), rand(3, 64, 64, dtype=BF16, seed=19)
offs8 = torch.tensor([30, 30, 96], device="cuda", dtype=torch.int32)
c9 = rand(9, 16, dtype=F16, seed=20)
x10, w10 = rand(300, 256, dtype=BF16, seed=21), rand(512, 256, dtype=BF16, seed=22)
x11, w11, g11 = rand(12, 64, dtype=BF16, seed=23), rand(48, 64, dtype=BF16, seed=24), rand(12, 48, dtype=BF16, seed=25)

def k_zero():
    out = c9.clone()
    tcgemm.matmul(torch.empty(9, 0, device="cuda", dtype=F16), torch.empty(0, 16, device="cuda", dtype=F16),
                  out=out, beta=-0.5)
    return out

def bounded():
    out = torch.empty(300, 512, device="cuda", dtype=BF16)
    torch.ops.tcgemm.mm_out(x10, w10.t(), out, 1.0, 0.0, 5)
    return out

def grads():
    xx, ww = x11.clone().requires_grad_(), w11.clone().requires_grad_()
    tcgemm.linear(xx, ww, None, "silu").backward(g11)
    return torch.cat([xx.grad.flatten(), ww.grad.flatten()])

calls = [lambda: tcgemm.matmul(a0, b0), lambda: tcgemm.matmul(a1, b1), lambda: tcgemm.matmul(a2, b2),
         lambda: tcgemm.matmul(a3, b3), lambda: tcgemm.matmul(a4, b4),
         lambda: tcgemm.linear(x5, w5, c5, "gelu"), lambda: tcgemm.linear(x6, w6),
         lambda: tcgemm.bmm(q7, k7.transpose(1, 2)), lambda: tcgemm.grouped_mm(x8, e8.transpose(1, 2), offs8),
         k_zero, bounded, grads]
torch.cuda.synchronize()
barrier = threading.Barrier(len(calls))
results, errors = {}, []

def worker(i):
    try:
        stream = torch.cuda.Stream() if i % 2 else torch.cuda.current_stream()
        with torch.cuda.stream(stream):
            barrier.wait()
            results[i] = [bits(calls[i]()) for _ in range(3)]
        stream.synchronize()
    except BaseException as error:
        errors.append(repr(error))
        barrier.abort()

threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(calls))]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
for i, call in enumerate(calls):
    again = bits(call())
    for j, got in enumerate(results[i]):
        assert torch.equal(got, again), f"call {i}, repetition {j}: not the bits of the same call made later"
for name, (a, b, got, slack) in {"kernel": (a0, b0, results[0][0], 1.0), "fallback": (a3, b3, results[3][0], 2.0),
                                 "pitch 67": (a4, b4, results[4][0], 2.0)}.items():
    ref, magnitude = mm_reference(a, b)
    assert_within_bound(got.view(a.dtype), ref, magnitude, a.shape[1] + 1, name, slack=slack)
print("FIRST CALLS OK")
'''


@gpu
def test_first_calls_of_a_fresh_process_from_twelve_threads_at_once() -> None:
    # A server warming up: its worker threads make the process's first tcgemm calls together, each a
    # different configuration (kernels of both dtypes and several tiles, two threads creating cuBLAS handles
    # for the fallback, fused and K-padded, decode, bmm, grouped, the K == 0 scale, sm_count, a backward),
    # so every one-time setup (the device's facts, each kernel's shared-memory opt-in, the cuBLAS handles,
    # the tile counters) races. Each result must have the bits of the same call made once the races are
    # over, and the products lie within the documented bound. In a subprocess: this process has made its
    # first calls long ago.
    conftest_dir = str(Path(__file__).resolve().parent)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(_FIRST_CALLS), conftest_dir], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0 and "FIRST CALLS OK" in proc.stdout, (proc.returncode, proc.stdout[-2000:],
                                                                      proc.stderr[-4000:])
