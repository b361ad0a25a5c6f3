// What the support kernels share: launch sizes, fp16/bf16 traits and the
// warp reductions. Internal to tcgemm_support.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace tcgemm::support::detail {

// A maximum of non-negative doubles kept as an integer: their bit patterns
// order as the values do, so atomicMax on the bits is a maximum of the values.
__device__ inline void atomic_max_nonnegative(unsigned long long* bits, double value) {
  atomicMax(bits, static_cast<unsigned long long>(__double_as_longlong(value)));
}

// The double whose bits such a maximum kept.
inline double double_from_bits(unsigned long long bits) {
  double v;
  static_assert(sizeof v == sizeof bits);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

constexpr int kThreads = 256;
// Grid-stride loops: enough blocks to fill any current GPU several times over.
constexpr int64_t kMaxBlocks = 4096;

inline unsigned blocks_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

// Conversions with round-to-nearest-even, chosen per dtype at compile time.
struct F16Traits {
  __device__ static float to_float(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
  __device__ static uint16_t from_float(float v) { return __half_as_ushort(__float2half_rn(v)); }
};
struct BF16Traits {
  __device__ static float to_float(uint16_t bits) { return __bfloat162float(__ushort_as_bfloat16(bits)); }
  __device__ static uint16_t from_float(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
};

// Sum over the warp, the total in lane 0: the kernels then add one value per
// warp atomically, not one per element.
template <typename T>
__device__ T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The same for maxima of doubles (NaN ignored, as fmax does) and minima of
// unsigned 64-bit values.
__device__ inline double warp_max(double v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}
__device__ inline unsigned long long warp_min(unsigned long long v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, v, offset);
    v = other < v ? other : v;
  }
  return v;
}

}  // namespace tcgemm::support::detail
