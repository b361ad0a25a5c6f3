"""Tensor-parallel linear layers on torch.distributed (NCCL), tcgemm computing
while the communication runs.

    import tcgemm.distributed as tp
    y = tp.all_gather_linear(x_shard, w_shard, bias, group=group)  # column-parallel: [W * S_l, N / W]
    y_shard = tp.linear_reduce_scatter(x, w_shard, group=group)    # row-parallel: [S / W, N]

W ranks of `group` hold sequence shards of the activations (rows [r * S_l,
(r + 1) * S_l) of the first dimension on rank r: the sequence-first layout
of sequence parallelism) and shards of a weight. The column-parallel layer
gathers x from every rank and multiplies it by its slice of the output
features; the row-parallel layer multiplies its slice of the input features
and sums the partial products across ranks, each rank keeping its own rows.

How the communication is hidden (tcgemm/_tp.py has the schedules):
- all_gather_linear posts the point-to-point transfers of the peers' shards
  on NCCL's stream (ring order, each in `chunks` pieces), multiplies the
  local shard's rows while they arrive, and each piece as it lands, writing
  its rows of y in place. tcgemm's rows do not depend on how many rows a call
  has, so y has, on every rank, exactly the bits of
  tcgemm.linear(all_gather(x_shard), w_shard, bias).
- linear_reduce_scatter multiplies the rows destined for each peer first and
  sends each block as soon as it is computed, its own rows last; the partial
  products (each rounded once to x's dtype) are summed in float32 in rank
  order 0, 1, ..., W - 1, the bias added last, and rounded once. The order
  is fixed, so repeated runs give the same bits, whatever NCCL's algorithms;
  they are not the bits of one unsplit product (that sum is split over K).

overlap=False runs the same products unoverlapped (one all-gather
collective, then one product; or one product, then the transfers): the
baseline of the overlap, with the same bits.

SMs: NCCL moves data with kernels of its own, which need SMs. tcgemm's
kernels are persistent, a CTA on every SM, so a product launched on all of
them keeps a transfer's kernel waiting until it ends. sm_count bounds the
products that run while transfers may be under way to that many SMs
(tcgemm::Options::sm_count), leaving the others to NCCL; 0 takes every SM.
The bits do not depend on it.

Both are torch operators (torch.ops.tcgemm.all_gather_mm and
torch.ops.tcgemm.mm_reduce_scatter, taking the group by name) with fake
implementations and gradients, each one's backward pass running the other:
usable under torch.compile. A backward pass communicates, so every rank of
the group must run it. Every rank must pass tensors of the same shapes and
dtype: a mismatch cannot be seen locally, and torch.distributed then hangs
or fails in the transfer.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import Tensor

from . import _ops, _tp

__all__ = ["all_gather_linear", "linear_reduce_scatter"]


class _TcgemmProducts:
    """The local products on tcgemm: rows of x times b (b = weight^T, read
    in place) into rows of an existing output, the bias fused; and the
    weight gradients."""

    @staticmethod
    def mm_into(a: Tensor, b: Tensor, bias: Tensor | None, out: Tensor, sm_count: int) -> None:
        if bias is None:
            _ops.mm_out(a, b, out, 1.0, 0.0, sm_count)  # tcgemm.linear without a bias runs the same call
        else:
            _ops.linear_out(a, b.t(), bias, 0, out, sm_count)

    @staticmethod
    def mm(a: Tensor, b: Tensor) -> Tensor:
        return _ops.mm(a, b, 1.0)


all_gather_mm, mm_reduce_scatter = _tp.define_ops("tcgemm", _TcgemmProducts())


def _autocast(x: Tensor, weight: Tensor, bias: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
    """Under torch.autocast("cuda"), the operands in the autocast dtype, as
    torch's linear takes them there (the casts are differentiable)."""
    if not (x.is_cuda and torch.is_autocast_enabled("cuda")):
        return x, weight, bias
    dtype = torch.get_autocast_dtype("cuda")
    floats = (torch.float32, torch.float16, torch.bfloat16)

    def cast(t: Tensor | None) -> Tensor | None:
        return t.to(dtype) if t is not None and t.dtype in floats and t.dtype != dtype else t

    return cast(x), cast(weight), cast(bias)


def _check(what: str, x: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """What tcgemm would refuse, refused on every rank before anything is
    sent (the shapes are checked by the schedules' wrappers in _tp)."""
    if x.dtype not in (torch.float16, torch.bfloat16) or weight.dtype != x.dtype:
        raise TypeError(f"tcgemm.distributed.{what}: x and weight must be both float16 or both bfloat16, got "
                        f"{x.dtype} and {weight.dtype}")
    if not x.is_cuda or weight.device != x.device:
        raise ValueError(f"tcgemm.distributed.{what}: x and weight must be on one CUDA device, got {x.device} and "
                         f"{weight.device}")
    # (TypeError for a wrong dtype, ValueError for a wrong device, as tcgemm.linear says them.)
    if bias is not None and bias.dtype not in (x.dtype, torch.float32):
        raise TypeError(f"tcgemm.distributed.{what}: bias must be {x.dtype} or float32, got {bias.dtype}")
    if bias is not None and bias.device != x.device:
        raise ValueError(f"tcgemm.distributed.{what}: bias must be on x's device ({x.device}), got {bias.device}")


def all_gather_linear(x_shard: Tensor, weight_shard: Tensor, bias: Tensor | None = None,
                      group: dist.ProcessGroup | None = None, *, chunks: int = 1,
                      overlap: bool = True, sm_count: int = 0) -> Tensor:
    """The column-parallel linear layer: all_gather(x_shard) @ weight_shard^T
    + bias, the all-gather hidden behind tcgemm's products.

    x_shard: [S_l, ..., K] float16 or bfloat16 CUDA (any float type under
    torch.autocast("cuda"), cast to its dtype as torch's linear is), this rank's rows
    (gathered along the first dimension, rank 0's first); weight_shard:
    [N_l, K], this rank's output features; bias: [N_l] of x's dtype or
    float32, or None. Returns [W * S_l, ..., N_l] on every rank, with exactly
    the bits of tcgemm.linear on the gathered x. chunks: the pieces each
    peer's shard travels in (more start the products earlier; each is one
    product). overlap=False: all-gather, then one product (the same bits).
    sm_count: the SMs each product may take while transfers run beside it
    (0: all; see the module's notes). Gradients: x_shard's
    (reduce-scattered: every rank must run the backward pass), weight's and
    bias's; the gathered x is kept for weight's."""
    x_shard, weight_shard, bias = _autocast(x_shard, weight_shard, bias)
    _check("all_gather_linear", x_shard, weight_shard, bias)
    return _tp.all_gather_linear(all_gather_mm, x_shard, weight_shard, bias, group, chunks, overlap, sm_count)


def linear_reduce_scatter(x: Tensor, weight_shard: Tensor, bias: Tensor | None = None,
                          group: dist.ProcessGroup | None = None, *, chunks: int = 1,
                          overlap: bool = True, sm_count: int = 0) -> Tensor:
    """The row-parallel linear layer: this rank's rows of the sum over ranks
    of x @ weight_shard^T, plus bias, the transfers of the partial products
    hidden behind tcgemm's products.

    x: [S, ..., K_l] float16 or bfloat16 CUDA (under torch.autocast("cuda")
    as all_gather_linear's), this rank's slice of the
    input features for the whole sequence (S a multiple of W);
    weight_shard: [N, K_l]; bias: [N] of x's dtype or float32, or None
    (added once, after the sum). Returns [S / W, ..., N]: rank r's rows of
    the first dimension. The sum over ranks is in float32 in rank order,
    rounded once: the same bits on every run and for every `chunks` and
    `overlap`. chunks: the pieces each peer's partial product is sent in.
    sm_count: the SMs each product may take while transfers run beside it
    (0: all). Gradients: x's (after an all-gather of the output's gradient:
    every rank must run the backward pass), weight's, and bias's share of
    this rank's output rows: the bias is one parameter of every rank, so
    sum its gradient over the group (all_reduce), as for any parameter
    replicated across tensor-parallel ranks."""
    x, weight_shard, bias = _autocast(x, weight_shard, bias)
    _check("linear_reduce_scatter", x, weight_shard, bias)
    return _tp.linear_reduce_scatter(mm_reduce_scatter, x, weight_shard, bias, group, chunks, overlap, sm_count)
