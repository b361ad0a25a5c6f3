"""Loads the tcgemm operators (libtcgemm_torch.so) and registers what torch
needs beyond them: fake (meta) implementations, so torch.compile can trace the
operators. (Their autograd formulas are in the library, csrc/ops.cpp.)

    torch.ops.tcgemm.mm(a, b, alpha=1.0) -> Tensor
    torch.ops.tcgemm.mm_out(a, b, out, alpha=1.0, beta=0.0, sm_count=0) -> None   (writes out)
    torch.ops.tcgemm.plan(a, b, out=None, alpha=1.0, beta=0.0) -> list[str]   (name, value, name, value, ...)
    torch.ops.tcgemm.linear(x, weight, bias=None, activation=0) -> Tensor   (act(x @ weight^T + bias), fused)
    torch.ops.tcgemm.linear_out(x, weight, bias, activation, out, sm_count=0) -> None   (the same into out, 2-D x)
    torch.ops.tcgemm.bmm(a, b) -> Tensor   ([batch, M, K] @ [batch, K, N], one strided batched call)
    torch.ops.tcgemm.grouped_mm(a, b, offs) -> Tensor   ([M, K] rows in groups @ [groups, K, N]; forward only)
    torch.ops.tcgemm.info() -> list[str]

sm_count (the in-place operators): the SMs tcgemm's kernel may take, 0 all
(tcgemm::Options::sm_count), for products that run beside communication.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ._activations import ACTIVATIONS  # tcgemm::Activation by name, for tcgemm.linear and tcgemm.nn

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
def _mm_out_fake(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float = 1.0, beta: float = 0.0,
                 sm_count: int = 0) -> None:
    _check_fake_operands(a, b)
    torch._check_value(out.dim() == 2 and out.shape[0] == a.shape[0] and out.shape[1] == b.shape[1],
                       lambda: f"tcgemm: out must be [{a.shape[0]}, {b.shape[1]}] for a @ b, got {list(out.shape)}")
    torch._check_type(out.dtype == a.dtype, lambda: f"tcgemm: out must have the dtype of a and b ({a.dtype}), got {out.dtype}")
    _check_fake_row_major(out)


def _check_fake_row_major(out: torch.Tensor) -> None:
    # output_ld in csrc/torch_layout.hpp: rows contiguous and apart (a single
    # row or column by the stride that matters; an empty out is any).
    rows, cols = out.shape
    s0, s1 = out.stride()
    row_major = (rows == 0 or cols == 0 or (s1 == 1 or cols == 1 if rows == 1 else
                                            s0 >= 1 if cols == 1 else s1 == 1 and s0 >= cols))
    torch._check_value(row_major, lambda: "tcgemm: out must be row-major (out.stride(1) == 1, out.stride(0) >= "
                                          "out.size(1)); pass out.contiguous() and copy back, or use the result of "
                                          "tcgemm.matmul(a, b)")


@torch.library.register_fake("tcgemm::linear")
def _linear_fake(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                 activation: int = 0) -> torch.Tensor:
    torch._check_value(weight.dim() == 2, lambda: "tcgemm.linear: weight must be [out_features, in_features]")
    torch._check_value(x.dim() >= 1, lambda: "tcgemm.linear: x must have at least 1 dimension")
    torch._check_value(x.shape[-1] == weight.shape[1],
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


@torch.library.register_fake("tcgemm::linear_out")
def _linear_out_fake(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, activation: int,
                     out: torch.Tensor, sm_count: int = 0) -> None:
    torch._check_value(x.dim() == 2, lambda: "tcgemm.linear_out: x must be 2-D [M, in_features]")
    _linear_fake(x, weight, bias, activation)
    torch._check_value(out.dim() == 2 and out.shape[0] == x.shape[0] and out.shape[1] == weight.shape[0],
                       lambda: f"tcgemm: out must be [{x.shape[0]}, {weight.shape[0]}] for x @ weight^T, got "
                               f"{list(out.shape)}")
    torch._check_type(out.dtype == x.dtype,
                      lambda: f"tcgemm: out must have the dtype of x and weight ({x.dtype}), got {out.dtype}")
    _check_fake_row_major(out)


@torch.library.register_fake("tcgemm::grouped_mm")
def _grouped_mm_fake(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    torch._check_value(a.dim() == 2 and b.dim() == 3,
                       lambda: "tcgemm.grouped_mm: a must be 2-D [M, K] and b 3-D [groups, K, N]")
    torch._check_value(offs.dim() == 1 and offs.shape[0] == b.shape[0],
                       lambda: f"tcgemm.grouped_mm: offs must be 1-D with one end per group of b ({b.shape[0]})")
    torch._check_type(offs.dtype == torch.int32, lambda: f"tcgemm.grouped_mm: offs must be int32, got {offs.dtype}")
    torch._check_value(1 <= b.shape[0] <= 256, lambda: "tcgemm.grouped_mm: the groups must number 1 to 256")
    torch._check_value(a.shape[1] == b.shape[1],
                       lambda: f"tcgemm: shapes do not match for a @ b: a is {list(a.shape)}, b is {list(b.shape)}")
    torch._check_type(a.dtype in (torch.float16, torch.bfloat16) and b.dtype == a.dtype,
                      lambda: f"tcgemm: a and b must be both float16 or both bfloat16, got {a.dtype} and {b.dtype}")
    if a.shape[0] != 0 and b.shape[2] != 0:
        torch._check_value(a.shape[1] % 8 == 0 and b.shape[2] % 8 == 0,
                           lambda: "tcgemm.grouped_mm: K and N must be multiples of 8")
    return a.new_empty((a.shape[0], b.shape[2]))


@torch.library.register_fake("tcgemm::bmm")
def _bmm_fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    torch._check_value(a.dim() == 3 and b.dim() == 3, lambda: "tcgemm.bmm: a and b must be 3-D [batch, rows, cols]")
    batch = 0 if a.shape[0] == 0 or b.shape[0] == 0 else max(a.shape[0], b.shape[0])  # (0 against 1: 0)
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
    # They depend on the sizes, so a traced program holds for the sizes on its
    # side of them: torch's contiguity test of a symbolic N guards on N % 8 (one
    # program per side), and torch.export traces a dynamic row count as 2 or
    # more (README, "Tracing bmm's one-row case").
    n8 = (n + 7) // 8 * 8
    strides = (n8, n8, 1) if m == 1 and n % 8 != 0 else (m * n, n, 1)
    return a.new_empty_strided((batch, m, n), strides)


mm = torch.ops.tcgemm.mm.default
bmm_op = torch.ops.tcgemm.bmm.default
grouped_mm_op = torch.ops.tcgemm.grouped_mm.default
mm_out = torch.ops.tcgemm.mm_out.default
linear_out = torch.ops.tcgemm.linear_out.default
plan_op = torch.ops.tcgemm.plan.default
linear_op = torch.ops.tcgemm.linear.default
info_op = torch.ops.tcgemm.info.default
