// Epilogue pieces shared by the kernel families: the parameters, fp32 <->
// fp16/bf16 packing (round to nearest even, as cuBLAS), and the clipped copy
// of a swizzled output panel for the one edge TMA cannot store exactly.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/smem_layout.hpp"

namespace tcgemm::detail {

struct EpilogueParams {
  float alpha;
  float beta;  // 0: C is never read
  // C itself, for the one case TMA cannot store exactly: TMA writes whole
  // 16-byte chunks, so when N % 8 != 0 a store of the last column panel would
  // also write the row padding past N (which may be another tensor's data).
  // Those panels are copied out with per-element bounds checks instead.
  void* c;
  int64_t ldc;
  int m, n;
};

// Whether the output panel starting at column panel_n0, kPanelCols wide, can
// go out through a TMA store (see EpilogueParams::c).
template <int kPanelCols>
__device__ __forceinline__ bool panel_tma_storable(const EpilogueParams& epi, int panel_n0) {
  return (epi.n % 8) == 0 || panel_n0 + kPanelCols <= epi.n;
}

template <typename Element>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<Element, __half>) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  } else {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
}

template <typename Element>
__device__ __forceinline__ float2 unpack2(uint32_t bits) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __half22float2(*reinterpret_cast<__half2*>(&bits));
  } else {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&bits));
  }
}

// Copies a ROWS x 64 output panel (128B-swizzled in shared memory) to C at
// (row0, col0) element by element with THREADS threads (thread = this one's
// index among them), skipping everything outside M x N. Used only for the
// ragged right edge when N % 8 != 0.
template <typename Element, int ROWS, int THREADS>
__device__ __forceinline__ void store_panel_clipped(const uint8_t* panel, const EpilogueParams& epi, int row0,
                                                    int col0, int thread) {
  constexpr int kCols = 64;
  Element* c = static_cast<Element*>(epi.c);
  for (int i = thread; i < ROWS * kCols; i += THREADS) {
    const int r = i / kCols, col = i % kCols;
    if (row0 + r < epi.m && col0 + col < epi.n)
      c[static_cast<int64_t>(row0 + r) * epi.ldc + col0 + col] =
          *reinterpret_cast<const Element*>(panel + swizzled_offset(r, col));
  }
}

}  // namespace tcgemm::detail
