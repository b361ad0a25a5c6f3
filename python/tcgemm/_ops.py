"""Loads the tcgemm operators (libtcgemm_torch.so) and registers what torch
needs beyond the CUDA kernels: fake (meta) implementations, so torch.compile
can trace the operators, and the autograd formula of `mm`.

    torch.ops.tcgemm.mm(a, b, alpha=1.0) -> Tensor
    torch.ops.tcgemm.mm_out(a, b, out, alpha=1.0, beta=0.0) -> None   (writes out)
    torch.ops.tcgemm.plan(a, b, out=None, alpha=1.0, beta=0.0) -> list[str]   (name, value, name, value, ...)
    torch.ops.tcgemm.linear(x, weight, bias=None, activation=0) -> Tensor   (act(x @ weight^T + bias), fused)
    torch.ops.tcgemm.bmm(a, b) -> Tensor   ([batch, M, K] @ [batch, K, N], one strided batched call)
    torch.ops.tcgemm.info() -> list[str]
"""

from __future__ import annotations

from pathlib import Path

import torch

_LIBRARY = Path(__file__).resolve().parent / "libtcgemm_torch.so"


def _load() -> None:
    if not _LIBRARY.is_file():
        raise ImportError(
            f"tcgemm: {_LIBRARY} is missing: this copy of the package was not built. "
            "Install it with `pip install --no-build-isolation .` from the tcgemm checkout.")
    try:
        torch.ops.load_library(str(_LIBRARY))
    except OSError as error:
        raise ImportError(f"tcgemm: cannot load {_LIBRARY}: {error} (built against another torch or CUDA?)") from error


_load()


def _check_fake_operands(a: torch.Tensor, b: torch.Tensor) -> None:
    # The same verdicts as the CUDA kernel (python/csrc/torch_gemm.hpp), for
    # what fake tensors can tell: ranks, dtypes and shapes.
    torch._check_value(a.dim() == 2 and b.dim() == 2, lambda: "tcgemm: a and b must be 2-D matrices")
    torch._check_type(a.dtype in (torch.float16, torch.bfloat16),
                      lambda: f"tcgemm: dtype {a.dtype} is not supported: a, b and out must be all float16 or all bfloat16")
    torch._check_type(b.dtype == a.dtype, lambda: f"tcgemm: a and b must have the same dtype, got {a.dtype} and {b.dtype}")
    torch._check_value(a.shape[1] == b.shape[0],
                       lambda: f"tcgemm: shapes do not match for a @ b: a is {list(a.shape)}, b is {list(b.shape)}")


@torch.library.register_fake("tcgemm::mm")
def _mm_fake(a: torch.Tensor, b: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    _check_fake_operands(a, b)
    return a.new_empty((a.shape[0], b.shape[1]))


@torch.library.register_fake("tcgemm::mm_out")
def _mm_out_fake(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float = 1.0, beta: float = 0.0) -> None:
    _check_fake_operands(a, b)
    torch._check_value(out.dim() == 2 and out.shape[0] == a.shape[0] and out.shape[1] == b.shape[1],
                       lambda: f"tcgemm: out must be [{a.shape[0]}, {b.shape[1]}] for a @ b, got {list(out.shape)}")
    torch._check_type(out.dtype == a.dtype, lambda: f"tcgemm: out must have the dtype of a and b ({a.dtype}), got {out.dtype}")


def _mm_setup_context(ctx: torch.autograd.function.FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
    a, b, alpha = inputs  # defaults filled in by torch
    ctx.save_for_backward(a, b)
    ctx.alpha = alpha


def _mm_backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> tuple:
    # d(alpha a @ b)/da = alpha grad @ b^T, d/db = alpha a^T @ grad: both run on
    # tcgemm through transposed views (op T), without copies of a or b.
    a, b = ctx.saved_tensors
    grad_a = torch.ops.tcgemm.mm(grad, b.t(), ctx.alpha) if ctx.needs_input_grad[0] else None
    grad_b = torch.ops.tcgemm.mm(a.t(), grad, ctx.alpha) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


torch.library.register_autograd("tcgemm::mm", _mm_backward, setup_context=_mm_setup_context)

# tcgemm::Activation, by the names tcgemm.linear takes.
ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "silu": 4}


@torch.library.register_fake("tcgemm::linear")
def _linear_fake(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                 activation: int = 0) -> torch.Tensor:
    torch._check_value(weight.dim() == 2, lambda: "tcgemm.linear: weight must be [out_features, in_features]")
    torch._check_value(x.dim() >= 1 and x.shape[-1] == weight.shape[1],
                       lambda: f"tcgemm.linear: x's last dimension must equal weight's in_features {weight.shape[1]}")
    torch._check_type(x.dtype in (torch.float16, torch.bfloat16) and weight.dtype == x.dtype,
                      lambda: f"tcgemm.linear: x and weight must be both float16 or both bfloat16, got {x.dtype} and "
                              f"{weight.dtype}")
    if bias is not None:
        torch._check_value(bias.dim() == 1 and bias.shape[0] == weight.shape[0],
                           lambda: f"tcgemm.linear: bias must be [{weight.shape[0]}]")
        torch._check_type(bias.dtype in (x.dtype, torch.float32),
                          lambda: f"tcgemm.linear: bias must be {x.dtype} or float32, got {bias.dtype}")
    torch._check_value(0 <= activation <= 4, lambda: f"tcgemm.linear: unknown activation {activation}")
    return x.new_empty((*x.shape[:-1], weight.shape[0]))


def _linear_setup_context(ctx: torch.autograd.function.FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
    x, weight, bias, activation = inputs
    ctx.save_for_backward(x, weight, bias)
    ctx.activation = activation


def _activation_backward(grad: torch.Tensor, z: torch.Tensor, activation: int) -> torch.Tensor:
    # d act(z) / dz times grad, by torch's own backward formulas.
    if activation == 1:
        return torch.ops.aten.threshold_backward(grad, z, 0.0)
    if activation in (2, 3):
        return torch.ops.aten.gelu_backward(grad, z, approximate="none" if activation == 2 else "tanh")
    if activation == 4:
        return torch.ops.aten.silu_backward(grad, z)
    return grad


def _linear_backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> tuple:
    # y = act(z), z = x W^T + b. The pre-activation z is not kept by the fused
    # forward: it is recomputed (one more GEMM, on tcgemm, bias fused) when
    # there is an activation. Every product runs on tcgemm: dx = dz W,
    # dW = dz^T x (transposed views, op T, no copies), db = sum of dz's rows.
    x, weight, bias = ctx.saved_tensors
    n, k = weight.shape
    grad_z = grad
    if ctx.activation != 0:
        z = torch.ops.tcgemm.linear(x, weight, bias, 0)
        grad_z = _activation_backward(grad, z, ctx.activation)
    g2 = grad_z.reshape(-1, n)
    grad_x = grad_w = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_x = torch.ops.tcgemm.mm(g2, weight, 1.0).view(x.shape)
    if ctx.needs_input_grad[1]:
        grad_w = torch.ops.tcgemm.mm(g2.t(), x.reshape(-1, k), 1.0)
    if bias is not None and ctx.needs_input_grad[2]:
        grad_b = g2.sum(0, dtype=torch.float32).to(bias.dtype)
    return grad_x, grad_w, grad_b, None


torch.library.register_autograd("tcgemm::linear", _linear_backward, setup_context=_linear_setup_context)

@torch.library.register_fake("tcgemm::bmm")
def _bmm_fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    torch._check_value(a.dim() == 3 and b.dim() == 3, lambda: "tcgemm.bmm: a and b must be 3-D [batch, rows, cols]")
    batch = max(a.shape[0], b.shape[0])
    torch._check_value(a.shape[0] in (batch, 1) and b.shape[0] in (batch, 1),
                       lambda: f"tcgemm.bmm: the batch sizes {a.shape[0]} and {b.shape[0]} must be equal, or one 1")
    torch._check_value(a.shape[2] == b.shape[1],
                       lambda: f"tcgemm: shapes do not match for a @ b: a is {list(a.shape)}, b is {list(b.shape)}")
    torch._check_type(a.dtype in (torch.float16, torch.bfloat16) and b.dtype == a.dtype,
                      lambda: f"tcgemm: a and b must be both float16 or both bfloat16, got {a.dtype} and {b.dtype}")
    m, n = a.shape[1], b.shape[2]
    if batch == 0:
        return a.new_empty((batch, m, n))
    # The strides the real op gives (bmm_output_strides in csrc/torch_gemm.hpp).
    n8 = (n + 7) // 8 * 8
    strides = (n8, n8, 1) if m == 1 and n % 8 != 0 else (m * n, n, 1)
    return a.new_empty_strided((batch, m, n), strides)


def _bmm_setup_context(ctx: torch.autograd.function.FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
    a, b = inputs
    ctx.save_for_backward(a, b)


def _bmm_backward(ctx: torch.autograd.function.FunctionCtx, grad: torch.Tensor) -> tuple:
    # da = dC B^T, dB = A^T dC, batch by batch on tcgemm (transposed views, no
    # copies); an operand broadcast over the batch gets the sum over it.
    a, b = ctx.saved_tensors
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = torch.ops.tcgemm.bmm(grad, b.transpose(1, 2))
        if a.shape[0] == 1 and grad_a.shape[0] != 1:
            grad_a = grad_a.sum(0, keepdim=True, dtype=torch.float32).to(a.dtype)
    if ctx.needs_input_grad[1]:
        grad_b = torch.ops.tcgemm.bmm(a.transpose(1, 2), grad)
        if b.shape[0] == 1 and grad_b.shape[0] != 1:
            grad_b = grad_b.sum(0, keepdim=True, dtype=torch.float32).to(b.dtype)
    return grad_a, grad_b


torch.library.register_autograd("tcgemm::bmm", _bmm_backward, setup_context=_bmm_setup_context)

mm = torch.ops.tcgemm.mm.default
bmm_op = torch.ops.tcgemm.bmm.default
mm_out = torch.ops.tcgemm.mm_out.default
plan_op = torch.ops.tcgemm.plan.default
linear_op = torch.ops.tcgemm.linear.default
info_op = torch.ops.tcgemm.info.default
