"""The matmul_v2 leaderboard's entry point on the installed package.

    from tcgemm.matmul_v2 import custom_kernel

data = (a, b, c): a is M x K, b is K x N, c is M x N, all fp16 and row-major;
c receives a @ b and is returned. Nothing is cached between calls: every call
takes its pointers, shapes and data as they come. For a single file without
the package, see `python -m tcgemm.make_submission`.
"""

from __future__ import annotations

import torch

from . import _ops

input_t = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
output_t = torch.Tensor


def custom_kernel(data: input_t) -> output_t:
    """c = a @ b into the preallocated c, on the current CUDA stream; returns c."""
    a, b, c = data
    _ops.mm_out(a, b, c, 1.0, 0.0)
    return c
