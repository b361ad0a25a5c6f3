"""Tensor-parallel products with the communication behind the computation:
the schedules and the torch operators of tcgemm.distributed, written against
torch.distributed and a local product given by the caller.

Two products cover a tensor-parallel layer and its gradients. W ranks of a
process group each hold a shard; rank r's rows of a sequence-sharded tensor
are rows [r * S_l, (r + 1) * S_l) of the whole, S = W * S_l.

- gather_mm: y = all_gather(x_shard) @ b (+ bias), [S, N] on every rank
  (column-parallel linear: b = weight_shard^T). The shards arrive from the
  peers one at a time, ring order (rank r - 1 first, then r - 2, ...), in
  `chunks` pieces each, by point-to-point sends on the communication stream,
  all posted first; the local shard's rows are multiplied while they
  arrive, and every piece as soon as it has arrived. Each block of rows is
  one local product writing its rows of y in place, so every row of y has
  the bits of the single product over the gathered x, as long as the local
  product's rows do not depend on how many rows a call has (tcgemm's
  kernels: batch invariance).
- mm_scatter: y_shard = sum over ranks of (x @ b)[rows of this rank]
  (+ bias), [S_l, N] (row-parallel linear: b = weight_shard^T over the
  rank's slice of K). Each rank multiplies the rows destined for its peers
  first, ring order (rank r + 1 first), sending each block of partial sums as
  soon as it is computed, and its own rows last. The partial products (each
  rounded once to x's dtype by the local product) are summed in float32 in
  rank order 0, 1, ..., W - 1, the bias added last, and rounded once: the
  same bits on every run and for every `chunks`, whatever NCCL's algorithms
  (a reduce-scatter collective does not fix its order of addition).

Both have a plain mode (overlap=False) for comparison: one all-gather
collective, then one product; or one product, then all the sends at once.
It gives the same bits. Overlapped, the products that run while transfers
may be under way take at most `sm_count` SMs (0: all), leaving the others
to the transfers' kernels.

The local product is an object with two methods (LocalProducts): tcgemm's
on CUDA tensors (tcgemm.distributed), a float64 reference in the tests, which
run these schedules on CPU processes over gloo. This module imports nothing
of tcgemm's, so those tests need no GPU and no compiled library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

import torch
import torch.distributed as dist
from torch import Tensor


class LocalProducts(Protocol):
    def mm_into(self, a: Tensor, b: Tensor, bias: Tensor | None, out: Tensor, sm_count: int) -> None:
        """out = a @ b (+ bias), out an existing [rows, N] view whose rows are
        contiguous, on at most sm_count SMs (0: all)."""

    def mm(self, a: Tensor, b: Tensor) -> Tensor:
        """a @ b, a new tensor (the gradients of b)."""


def row_blocks(rows: int, pieces: int, align: int = 128) -> list[tuple[int, int]]:
    """[0, rows) in at most `pieces` contiguous blocks (lo, hi) of nearly equal
    size, inner boundaries at multiples of `align` rows (whole tiles for the
    local product), none empty. Fewer blocks where rows holds fewer than
    `pieces` blocks of `align` rows; no blocks for no rows."""
    if pieces < 1:
        raise ValueError(f"tcgemm.distributed: chunks must be at least 1, got {pieces}")
    if rows <= 0:
        return []
    units = -(-rows // align)  # blocks of `align` rows, the last one short
    pieces = min(pieces, units)
    bounds = [rows * i // pieces for i in range(pieces + 1)]
    inner = sorted({min(rows, round(b / align) * align) for b in bounds[1:-1]} - {0, rows})
    edges = [0, *inner, rows]
    return list(zip(edges[:-1], edges[1:]))


@dataclass(frozen=True)
class _Ring:
    """The group as the schedules use it: this rank, the size, and each group
    rank's global rank (what torch.distributed's point-to-point calls take)."""

    group: dist.ProcessGroup
    rank: int
    size: int
    global_ranks: tuple[int, ...]

    @classmethod
    def of(cls, group: dist.ProcessGroup) -> _Ring:
        size = group.size()
        return cls(group, group.rank(), size, tuple(dist.get_global_rank(group, r) for r in range(size)))

    def exchange(self, send: Tensor | None, to: int, recv: Tensor | None, frm: int) -> list[dist.Work]:
        """Starts a send to group rank `to` and a receive from `frm` (either may be None)."""
        ops = []
        if send is not None:
            ops.append(dist.P2POp(dist.isend, send, self.global_ranks[to], self.group))
        if recv is not None:
            ops.append(dist.P2POp(dist.irecv, recv, self.global_ranks[frm], self.group))
        return dist.batch_isend_irecv(ops) if ops else []


def _wait(works: list[dist.Work]) -> None:
    # On NCCL this makes the current stream wait for the transfer (the host
    # goes on); on gloo the host waits.
    for work in works:
        work.wait()


def _check_operands(what: str, x: Tensor, b: Tensor, bias: Tensor | None) -> None:
    if x.dim() != 2 or b.dim() != 2:
        raise ValueError(f"tcgemm.distributed.{what}: x and b must be 2-D, got {list(x.shape)} and {list(b.shape)}")
    if x.shape[1] != b.shape[0]:
        raise ValueError(f"tcgemm.distributed.{what}: shapes do not match for x @ b: x is {list(x.shape)}, "
                         f"b is {list(b.shape)}")
    if x.dtype != b.dtype:
        raise TypeError(f"tcgemm.distributed.{what}: x and b must have one dtype, got {x.dtype} and {b.dtype}")
    if x.device != b.device:
        raise ValueError(f"tcgemm.distributed.{what}: x and b must be on one device, got {x.device} and {b.device}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != b.shape[1]):
        raise ValueError(f"tcgemm.distributed.{what}: bias must be [{b.shape[1]}], got {list(bias.shape)}")


def _output(x: Tensor, rows: int, n: int, bias: Tensor | None) -> Tensor:
    """[rows, n] of x's dtype (x: [., K]); with n not a multiple of 8, rows
    padded to one where tcgemm.linear pads them (a bias, or K a multiple of
    8: tcgemm's kernels store rows 16 bytes apart, and rows stored N apart
    would go to cuBLAS, with other bits), seen through a view of the first n
    columns."""
    if n % 8 != 0 and rows > 1 and (bias is not None or x.shape[-1] % 8 == 0):
        return x.new_empty((rows, (n + 7) // 8 * 8))[:, :n]
    return x.new_empty((rows, n))


def gather_mm(x_shard: Tensor, b: Tensor, bias: Tensor | None, group: dist.ProcessGroup,
              products: LocalProducts, chunks: int = 1, overlap: bool = True,
              keep_gathered: bool = False, sm_count: int = 0) -> tuple[Tensor, Tensor]:
    """(all_gather(x_shard) @ b + bias, the gathered x) on every rank of
    `group`; the gathered x is [W * S_l, K] with keep_gathered, else [0, K].
    Every rank passes the same S_l, K, N and dtype. Overlapped, the products
    that run while a transfer may still be under way (all but the last) take
    at most sm_count SMs (0: all), leaving the rest to the transfers."""
    _check_operands("gather_mm", x_shard, b, bias)
    ring = _Ring.of(group)
    rows, k = x_shard.shape
    n = b.shape[1]
    total = ring.size * rows
    y = _output(x_shard, total, n, bias)
    # The peers' rows land here (and, kept, the local rows too).
    gathered = x_shard.new_empty((total, k)) if keep_gathered or ring.size > 1 or not overlap else None
    blocks = row_blocks(rows, chunks)

    def shard(t: Tensor, r: int) -> Tensor:
        return t[r * rows:(r + 1) * rows]

    if not overlap:
        # One all-gather collective, then one product over all the rows.
        dist.all_gather_into_tensor(gathered, x_shard.contiguous(), group=group)
        products.mm_into(gathered, b, bias, y, 0)
    else:
        # Every exchange is posted first, then the local rows are multiplied
        # while the peers' arrive: NCCL's stream waits for what the current
        # stream holds when a transfer is posted, so a product queued before
        # them would hold the first transfer back until it ended. (What the
        # local product refuses, the wrappers refuse before anything is sent;
        # should it still fail, the transfers end before the error goes on,
        # into buffers still alive, and the peers' with them.)
        transfers = ring.size > 1 and rows > 0
        x_send = x_shard.contiguous()
        arrivals = []  # (works, source rank, block), in the order they complete
        for step in range(1, ring.size):
            to, frm = (ring.rank + step) % ring.size, (ring.rank - step) % ring.size
            for lo, hi in blocks:
                works = ring.exchange(x_send[lo:hi], to, shard(gathered, frm)[lo:hi], frm)
                arrivals.append((works, frm, lo, hi))
        try:
            products.mm_into(x_shard, b, bias, shard(y, ring.rank), sm_count if transfers else 0)
        except BaseException:
            for works, *_ in arrivals:
                _wait(works)
            raise
        for i, (works, frm, lo, hi) in enumerate(arrivals):
            _wait(works)
            last = i == len(arrivals) - 1
            products.mm_into(shard(gathered, frm)[lo:hi], b, bias, shard(y, frm)[lo:hi], 0 if last else sm_count)
        if keep_gathered:
            shard(gathered, ring.rank).copy_(x_shard)
    if not y.is_contiguous():
        y = y.contiguous()
    # Not a view of the buffer when it is not kept: that would keep it alive.
    return y, (gathered if keep_gathered else x_shard.new_empty((0, k)))


def sum_in_rank_order(partials: list[Tensor], bias: Tensor | None, dtype: torch.dtype) -> Tensor:
    """(((p_0 + p_1) + p_2) + ... + bias) in float32 (or dtype, where wider),
    rounded once to dtype."""
    total = partials[0].to(torch.promote_types(dtype, torch.float32), copy=True)
    for p in partials[1:]:
        total.add_(p)
    if bias is not None:
        total.add_(bias)
    return total.to(dtype)


def mm_scatter(x: Tensor, b: Tensor, bias: Tensor | None, group: dist.ProcessGroup,
               products: LocalProducts, chunks: int = 1, overlap: bool = True, sm_count: int = 0) -> Tensor:
    """This rank's rows of sum over ranks of (x @ b), plus bias: [S / W, N],
    the sum in float32 in rank order, rounded once. Every rank passes the same
    S, N and dtype; S must be a multiple of the group's size. Overlapped,
    the products after the first transfer has started take at most sm_count
    SMs (0: all), leaving the rest to the transfers."""
    _check_operands("mm_scatter", x, b, bias)
    ring = _Ring.of(group)
    total_rows, n = x.shape[0], b.shape[1]
    if total_rows % ring.size != 0:
        raise ValueError(f"tcgemm.distributed.mm_scatter: x's {total_rows} rows do not split evenly over "
                         f"{ring.size} ranks")
    rows = total_rows // ring.size
    # Partial products for every rank's rows (this rank's own among them),
    # and the peers' partial products of this rank's rows.
    partial = x.new_empty((total_rows, n))
    received = x.new_empty((total_rows, n))

    def shard(t: Tensor, r: int) -> Tensor:
        return t[r * rows:(r + 1) * rows]

    # The first product comes before any transfer: a call the local product
    # refuses is refused before anything is sent.
    works: list[dist.Work] = []
    if not overlap:
        products.mm_into(x, b, None, partial, 0)
        for step in range(1, ring.size):
            to, frm = (ring.rank + step) % ring.size, (ring.rank - step) % ring.size
            works += ring.exchange(shard(partial, to), to, shard(received, frm), frm)
    else:
        for step in range(1, ring.size):
            to, frm = (ring.rank + step) % ring.size, (ring.rank - step) % ring.size
            for lo, hi in row_blocks(rows, chunks):
                # (the first product runs before any transfer: on every SM)
                products.mm_into(shard(x, to)[lo:hi], b, None, shard(partial, to)[lo:hi], sm_count if works else 0)
                works += ring.exchange(shard(partial, to)[lo:hi], to, shard(received, frm)[lo:hi], frm)
        products.mm_into(shard(x, ring.rank), b, None, shard(partial, ring.rank), sm_count if works else 0)
    _wait(works)
    parts = [shard(partial if r == ring.rank else received, r) for r in range(ring.size)]
    return sum_in_rank_order(parts, bias, x.dtype)


def _grad_like(b: Tensor, products: LocalProducts, lhs: Tensor, rhs: Tensor) -> Tensor:
    """lhs^T @ rhs (b's gradient, b's shape), in b's layout: a transposed view
    (b = weight^T) gets weight's row-major gradient, seen transposed."""
    if b.dim() == 2 and b.stride(0) == 1 and b.stride(1) != 1:
        return products.mm(rhs.t(), lhs).t()
    return products.mm(lhs.t(), rhs)


def _bias_grad(grad_y: Tensor, dtype: torch.dtype) -> Tensor:
    """grad_y summed over rows, in float32 (or wider), in the bias's dtype."""
    return grad_y.sum(0, dtype=torch.promote_types(grad_y.dtype, torch.float32)).to(dtype)


def define_ops(namespace: str, products: LocalProducts) -> tuple[object, object]:
    """The torch operators `namespace::all_gather_mm` and
    `namespace::mm_reduce_scatter` on `products`: gather_mm and mm_scatter by
    process-group name (what torch.compile can trace), with fake
    implementations and gradients, each product's backward the other one:

      all_gather_mm(x, b, bias, group_name, chunks, overlap, keep_gathered, sm_count) -> (y, gathered)
        dx = mm_reduce_scatter(dy, b^T), db = gathered^T @ dy, dbias = dy summed over rows
      mm_reduce_scatter(x, b, bias, group_name, chunks, overlap, sm_count) -> y
        (dx, gathered dy) = all_gather_mm(dy, b^T), db = x^T @ gathered dy, dbias = dy summed over rows

    A gradient of x needs all ranks' dy, so every rank of the group must run
    the backward pass. Returns the two operators' default overloads."""
    from torch.distributed.distributed_c10d import _resolve_process_group

    def size_of(group_name: str) -> int:
        return _resolve_process_group(group_name).size()

    # (Optional, not `| None`, in the operators' signatures: torch derives
    # their schemas from these annotations.)
    @torch.library.custom_op(f"{namespace}::all_gather_mm", mutates_args=())
    def all_gather_mm(x: Tensor, b: Tensor, bias: Optional[Tensor], group_name: str, chunks: int, overlap: bool,
                      keep_gathered: bool, sm_count: int) -> tuple[Tensor, Tensor]:
        return gather_mm(x, b, bias, _resolve_process_group(group_name), products, chunks, overlap, keep_gathered,
                         sm_count)

    @all_gather_mm.register_fake
    def _(x, b, bias, group_name, chunks, overlap, keep_gathered, sm_count):
        _check_operands("gather_mm", x, b, bias)
        total = size_of(group_name) * x.shape[0]
        return x.new_empty((total, b.shape[1])), x.new_empty((total if keep_gathered else 0, x.shape[1]))

    @torch.library.custom_op(f"{namespace}::mm_reduce_scatter", mutates_args=())
    def mm_reduce_scatter(x: Tensor, b: Tensor, bias: Optional[Tensor], group_name: str, chunks: int,
                          overlap: bool, sm_count: int) -> Tensor:
        return mm_scatter(x, b, bias, _resolve_process_group(group_name), products, chunks, overlap, sm_count)

    @mm_reduce_scatter.register_fake
    def _(x, b, bias, group_name, chunks, overlap, sm_count):
        _check_operands("mm_scatter", x, b, bias)
        size = size_of(group_name)
        torch._check(x.shape[0] % size == 0,
                     lambda: f"tcgemm.distributed.mm_scatter: x's {x.shape[0]} rows do not split evenly over "
                             f"{size} ranks")
        return x.new_empty((x.shape[0] // size, b.shape[1]))

    def gather_setup(ctx, inputs, output):
        _, b, bias, group_name, chunks, overlap, keep_gathered, sm_count = inputs
        ctx.save_for_backward(b, output[1])
        ctx.args = (group_name, chunks, overlap, keep_gathered, sm_count, None if bias is None else bias.dtype)

    def gather_backward(ctx, grad_y, _grad_gathered):
        b, gathered = ctx.saved_tensors
        group_name, chunks, overlap, keep_gathered, sm_count, bias_dtype = ctx.args
        dx = db = dbias = None
        if ctx.needs_input_grad[0]:
            dx = mm_reduce_scatter(grad_y, b.t(), None, group_name, chunks, overlap, sm_count)
        if ctx.needs_input_grad[1]:
            if not keep_gathered:
                raise RuntimeError("tcgemm.distributed: b's gradient needs the gathered x; call all_gather_mm "
                                   "with keep_gathered=True when b requires grad")
            db = _grad_like(b, products, gathered, grad_y)
        if bias_dtype is not None and ctx.needs_input_grad[2]:
            dbias = _bias_grad(grad_y, bias_dtype)
        return dx, db, dbias, None, None, None, None, None

    def scatter_setup(ctx, inputs, output):
        x, b, bias, group_name, chunks, overlap, sm_count = inputs
        ctx.save_for_backward(x, b)
        ctx.args = (group_name, chunks, overlap, sm_count, None if bias is None else bias.dtype)

    def scatter_backward(ctx, grad_y):
        x, b = ctx.saved_tensors
        group_name, chunks, overlap, sm_count, bias_dtype = ctx.args
        dx = db = dbias = None
        need_b = ctx.needs_input_grad[1]
        if ctx.needs_input_grad[0] or need_b:
            # x's gradient comes with the gathered dy that b's needs.
            dx, gathered = all_gather_mm(grad_y, b.t(), None, group_name, chunks, overlap, need_b, sm_count)
            if need_b:
                db = _grad_like(b, products, x, gathered)
            if not ctx.needs_input_grad[0]:
                dx = None
        if bias_dtype is not None and ctx.needs_input_grad[2]:
            dbias = _bias_grad(grad_y, bias_dtype)
        return dx, db, dbias, None, None, None, None

    all_gather_mm.register_autograd(gather_backward, setup_context=gather_setup)
    mm_reduce_scatter.register_autograd(scatter_backward, setup_context=scatter_setup)
    return all_gather_mm, mm_reduce_scatter


def group_name(group: dist.ProcessGroup | None, what: str) -> str:
    """The name the operators take for `group` (None: the default group)."""
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError(f"tcgemm.distributed.{what}: torch.distributed is not initialized; call "
                           "torch.distributed.init_process_group first")
    return (group if group is not None else dist.group.WORLD).group_name


def _check_layer(what: str, x: Tensor, weight: Tensor, bias: Tensor | None, chunks: int, sm_count: int) -> None:
    if x.dim() < 2 or weight.dim() != 2:
        raise ValueError(f"tcgemm.distributed.{what}: x must be [rows, ..., in_features] and weight "
                         f"[out_features, in_features], got {list(x.shape)} and {list(weight.shape)}")
    if x.shape[-1] != weight.shape[1]:
        raise ValueError(f"tcgemm.distributed.{what}: x's last dimension {x.shape[-1]} must equal weight's "
                         f"in_features {weight.shape[1]}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise ValueError(f"tcgemm.distributed.{what}: bias must be [{weight.shape[0]}], got {list(bias.shape)}")
    if chunks < 1:
        raise ValueError(f"tcgemm.distributed.{what}: chunks must be at least 1, got {chunks}")
    if sm_count < 0:
        raise ValueError(f"tcgemm.distributed.{what}: sm_count must be 0 (every SM) or a number of SMs, got "
                         f"{sm_count}")


def all_gather_linear(op, x_shard: Tensor, weight: Tensor, bias: Tensor | None,
                      group: dist.ProcessGroup | None, chunks: int, overlap: bool, sm_count: int = 0) -> Tensor:
    """all_gather(x_shard) @ weight^T + bias by the operator `op`
    (all_gather_mm), x_shard [S_l, ..., K] gathered along its first
    dimension; [W * S_l, ..., N_l]. The gathered x is kept where weight's
    gradient will need it."""
    name = group_name(group, "all_gather_linear")
    _check_layer("all_gather_linear", x_shard, weight, bias, chunks, sm_count)
    keep = torch.is_grad_enabled() and weight.requires_grad
    y, _ = op(x_shard.reshape(-1, x_shard.shape[-1]), weight.t(), bias, name, chunks, overlap, keep, sm_count)
    return y.view(-1, *x_shard.shape[1:-1], weight.shape[0])


def linear_reduce_scatter(op, x: Tensor, weight: Tensor, bias: Tensor | None,
                          group: dist.ProcessGroup | None, chunks: int, overlap: bool, sm_count: int = 0) -> Tensor:
    """This rank's rows of sum over ranks of x @ weight^T, plus bias, by the
    operator `op` (mm_reduce_scatter), x [S, ..., K_l] split along its first
    dimension; [S / W, ..., N]."""
    name = group_name(group, "linear_reduce_scatter")
    _check_layer("linear_reduce_scatter", x, weight, bias, chunks, sm_count)
    size = (group if group is not None else dist.group.WORLD).size()
    if x.shape[0] % size != 0:
        raise ValueError(f"tcgemm.distributed.linear_reduce_scatter: x's first dimension {x.shape[0]} does not "
                         f"split evenly over {size} ranks")
    y = op(x.reshape(-1, x.shape[-1]), weight.t(), bias, name, chunks, overlap, sm_count)
    return y.view(-1, *x.shape[1:-1], weight.shape[0])
