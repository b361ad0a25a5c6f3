// Whether a call's C is stored with an L2 evict-first policy (both kernel
// families; EpilogueParams::c_evict_first). Pure host arithmetic, unit-tested
// without a GPU.
//
// A persistent grid walks its tiles in order, but its CTAs drift apart over
// a long walk: some finish their share of tiles sooner than others. While C
// passes through L2 with the default policy, the lines of A and B that slower
// CTAs will still read compete with the C just written; where more C is
// written between two reads of the same operand lines than L2 holds, the
// operands come from DRAM again. A batch of 128 problems of 2048^2 x 128
// (1.07 GB of C) read its 134 MB of operands 1.75 times so (Nsight Compute,
// H100, clock pinned); stored evict-first, C's lines are the ones L2 gives
// up first, and the same batch read 1.27 times (docs/PERF.md, "C stored
// evict-first at a short K"). At free-running clocks it still reads them
// about 1.63 times, where cuBLAS reads them once (part 21); marking the
// operands' loads evict-last as well made that worse. Asked only where C is
// larger than L2 (a C that fits stays there for the next kernel, which
// usually reads it) and K is short (below).
#pragma once

#include <cstdint>

namespace tcgemm::detail {

// Where the call is mostly C's write stream: K of at most this (sm90's
// paired stores take the same bound, sm90::kPairsMaxK). At longer K the
// operands' reads outweigh C's writes, and the policy, measured on the large
// suite's calls where C outgrows L2 (K = 1024-8192, C of 128-256 MiB),
// changed nothing beyond the H100's spread of a few percent either way.
inline constexpr int64_t kEvictFirstMaxK = 256;

// m x n elements of `element_bytes` each, `batch` times (every problem of a
// strided batch), against an L2 of `l2_bytes` (0: not known, no policy), at
// inner dimension k.
inline constexpr bool c_stores_evict_first(int64_t m, int64_t n, int64_t k, int64_t batch, int element_bytes,
                                           int64_t l2_bytes) {
  return l2_bytes > 0 && k <= kEvictFirstMaxK &&
         static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(batch) * element_bytes >
             static_cast<double>(l2_bytes);
}

}  // namespace tcgemm::detail
