"""tcgemm for PyTorch: the Hopper (sm_90a) and Blackwell (sm_100a) tensor-core GEMM as torch operators.

    import tcgemm
    c = tcgemm.matmul(a, b)                          # a @ b, fp16 or bf16, 2-D CUDA tensors
    tcgemm.matmul(a, b, out=c, alpha=1.0, beta=1.0)  # c = alpha * a @ b + beta * c, in place
    torch.ops.tcgemm.mm(a, b)                        # the operator (torch.compile traces it)
    tcgemm.plan(a, b)                                # which kernel would run, and why
    y = tcgemm.linear(x, w, bias, activation="silu") # act(x @ w^T + bias), fused, any leading dims of x
    c = tcgemm.bmm(a, b)                             # [batch, M, K] @ [batch, K, N] in one call
    y = tcgemm.grouped_mm(x, w.transpose(1, 2), offs) # mixture of experts: x's rows in groups @ w[g]^T
    tcgemm.patch_linear(model)                       # a model's nn.Linear layers onto tcgemm (reversible)

Transposed views (a.t(), w.t()) are passed as op T with their leading
dimension, without copies; see `matmul` for the rules. The one-file
submission generator is `python -m tcgemm.make_submission OUT.py`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from . import _ops

__all__ = ["matmul", "bmm", "grouped_mm", "linear", "patch_linear", "unpatch_linear", "plan", "Plan", "info", "__version__"]


def matmul(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, alpha: float = 1.0,
           beta: float = 0.0) -> torch.Tensor:
    """alpha * a @ b (+ beta * out), computed by tcgemm on the current CUDA stream.

    a (M x K) and b (K x N) are 2-D CUDA tensors of one device and one dtype,
    float16 or bfloat16; accumulation is fp32 in K order, one rounding.
    Layouts: a tensor whose rows are contiguous (stride(1) == 1) is passed as
    is (op N, leading dimension stride(0)); one whose columns are contiguous
    (stride(0) == 1, e.g. w.t()) as op T with leading dimension stride(1); any
    other strides (x[:, ::2], expanded views) are copied to a contiguous
    tensor first. `out`, when given, must be an M x N row-major tensor of the
    same dtype and device (stride(1) == 1); it is written in place and
    returned, and `beta` scales its previous contents (beta == 0: not read).
    Without `out` a new row-major tensor is returned, and beta must be 0.

    Raises TypeError (dtypes), ValueError (ranks, shapes, devices, layouts of
    out, and whatever the library rejects, with its reason) or RuntimeError
    (CUDA failures; out= with an operand that requires grad, which torch's
    out= functions refuse too: the product would not be differentiable). A
    refused call leaves `out` untouched.
    """
    if out is None:
        if beta != 0.0:
            raise ValueError(f"tcgemm.matmul: beta={beta} needs out (out = alpha * a @ b + beta * out)")
        return _ops.mm(a, b, alpha)
    _ops.mm_out(a, b, out, alpha, beta)  # (its Autograd kernel refuses an argument that requires grad)
    return out


def bmm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b for batches of matrices, as torch.bmm: a [batch, M, K] and b
    [batch, K, N] (a batch size of 1 broadcasts that operand), float16 or
    bfloat16 CUDA tensors of one dtype; returns a new [batch, M, N] tensor.
    One strided batched tcgemm call: the persistent kernel walks every
    problem's tiles, so small problems still fill the GPU, and each problem's
    result has the bits of tcgemm.matmul on its own matrices (batch
    invariant). Transposed views (b.transpose(1, 2)) are read in place.
    The result is contiguous, except where M is 1 and N not a multiple of
    8: each problem's row then starts 8 elements apart (N rounded up), the
    alignment tcgemm's kernels store at (contiguous rows would go to cuBLAS).
    Differentiable, traceable by torch.compile, capturable in CUDA graphs."""
    return _ops.bmm_op(a, b)


def grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """The M-grouped product of a mixture of experts, as torch._grouped_mm:
    a [M, K] holds the tokens sorted by expert, b [groups, K, N] a weight
    matrix per expert (an nn.Linear weight stack w [groups, N, K] is passed as
    w.transpose(1, 2) and read in place), offs [groups] int32 the experts'
    cumulative row ends on a's device. Returns a new [M, N] tensor whose rows
    of group g are a[rows of g] @ b[g], each row bit-identical to
    tcgemm.matmul on its group's rows alone; rows at or past offs[-1] are left
    as allocated (uninitialized), and so is every row if offs decreases
    anywhere (the kernel, reading offs on the device, cannot raise). One tcgemm call reads offs on the device
    (no host sync): traceable by torch.compile, capturable in CUDA graphs.
    Forward only (refused on tensors that require grad); at most 256 groups."""
    return _ops.grouped_mm_op(a, b, offs)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
           activation: str | None = None) -> torch.Tensor:
    """act(x @ weight^T + bias), as torch.nn.functional.linear followed by the
    activation, in one tcgemm call: the bias and the activation are applied in
    fp32 to the accumulator, and the result is rounded once.

    x is [..., in_features] (any leading dimensions; viewed as a matrix without
    a copy where its rows are evenly spaced), weight [out_features,
    in_features] (read transposed in place), bias [out_features] of x's dtype
    or float32, or None. activation: None, "relu", "gelu", "gelu_tanh"
    (gelu(approximate="tanh")) or "silu". x and weight: float16 or bfloat16
    CUDA tensors of one dtype. Differentiable (gradients of x, weight and bias
    on tcgemm), traceable by torch.compile, capturable in CUDA graphs.
    """
    if activation not in _ops.ACTIVATIONS:
        raise ValueError(f"tcgemm.linear: unknown activation {activation!r}: "
                         "choose None, 'relu', 'gelu', 'gelu_tanh' or 'silu'")
    return _ops.linear_op(x, weight, bias, _ops.ACTIVATIONS[activation])


@dataclass(frozen=True)
class Plan:
    """What tcgemm runs for a call, and why (tcgemm::Plan plus the layout)."""

    status: str   # "ok", or why the call would be refused: "invalid_argument", ...
    backend: str  # "sm90" or "sm100" (tcgemm's kernels), "cublas" (the fallback), "none" (nothing to
                  # compute, or the scale kernel)
    kernel: str   # e.g. "sm90_gemm_persistent<f16,NT,128x256x64, 4 stages>"
    reason: str   # why this backend, or why the call is refused
    layout: str   # ops and leading dimensions handed to the library, e.g. "NT lda=64 ldb=64 ldc=128",
                  # with "copied a" / "copied b" where an operand had to be copied
    path: str = "none"  # what runs: "kernel" (tcgemm's, of `backend`), "cublas", "scale" (K or alpha == 0:
                        # C = beta * C, A and B not read),
                        # "none" (nothing to compute, or refused)
    # The kernel's configuration where path is "kernel" (zeros otherwise): the tile of C (block_m x block_n),
    # K per stage, the stages of its operand ring, CTAs per cluster along M, whether its consumer warpgroups
    # alternate tiles (sm90), how tiles reach CTAs ("persistent", "counted" or "cluster_launch_control"),
    # CTAs per cluster along N (sm90: 2 share A by multicast), and whether the kernel computes C^T (the
    # swapped tiles: block_m then counts C's columns and block_n its rows).
    block_m: int = 0
    block_n: int = 0
    block_k: int = 0
    stages: int = 0
    cluster_m: int = 0
    pingpong: bool = False
    schedule: str = "automatic"
    cluster_n: int = 0
    swap_ab: bool = False

    @classmethod
    def _from_fields(cls, fields: list[str]) -> Plan:
        # The operator names every value (name, value, name, value, ...): each
        # field is taken by its name and converted to its annotated type.
        named = dict(zip(fields[0::2], fields[1::2]))
        convert = {"str": str, "int": int, "bool": lambda text: text == "true"}
        return cls(**{f.name: convert[f.type](named[f.name]) for f in dataclasses.fields(cls)})


def plan(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, alpha: float = 1.0,
         beta: float = 0.0) -> Plan:
    """The Plan of `matmul(a, b, out, alpha, beta)`, without running it.

    Raises like matmul for tensors it refuses (dtypes, shapes, devices)."""
    return Plan._from_fields(_ops.plan_op(a, b, out, alpha, beta))


def info() -> dict[str, str]:
    """The build: version, CUDA architectures, kernel families, CUDA runtime."""
    version, archs, families, runtime = _ops.info_op()
    return {"version": version, "cuda_archs": archs, "kernel_families": families, "cuda_runtime": runtime}


__version__: str = info()["version"]

from .nn import patch_linear, unpatch_linear  # noqa: E402  (nn uses linear above)
