#include "support/fill.hpp"

#include "support/cuda_error.hpp"
#include "support/device_buffer.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_util.cuh"

namespace tcgemm::support {

namespace {

using detail::blocks_for;
using detail::kThreads;

// SplitMix64's finalizer: a counter-based generator, so element i needs no
// state from element i - 1 and every thread fills its own elements.
__host__ __device__ inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// The distribution as the kernel uses it: integers when span > 0 (lo plus
// 0..span-1), else uniform lo + scale * [0, 1).
struct Draw {
  float lo, scale;
  uint32_t span;
};

template <typename Traits>
__global__ void fill_random_kernel(uint16_t* data, int64_t rows, int64_t cols, int64_t ld, uint64_t key, Draw draw,
                                   uint16_t pad_bits) {
  const int64_t total = rows * ld;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / ld, c = i - r * ld;
    if (c >= cols) {
      data[i] = pad_bits;
      continue;
    }
    const uint64_t h = mix64(key + static_cast<uint64_t>(r * cols + c) * kGolden);
    float v;
    if (draw.span > 0) {
      v = draw.lo + static_cast<float>((h >> 32) % draw.span);
    } else {
      const float u = static_cast<float>(h >> 40) * 0x1p-24f;  // 24 random bits: [0, 1)
      v = draw.lo + draw.scale * u;
    }
    data[i] = Traits::from_float(v);
  }
}

__global__ void fill_bits_kernel(uint16_t* data, int64_t count, uint16_t bits) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x)
    data[i] = bits;
}

struct StatsAccum {
  unsigned long long nonzero, nonfinite;
};

__global__ void value_stats_kernel(DType dtype, const uint16_t* data, int64_t rows, int64_t cols, int64_t ld,
                                   StatsAccum* acc) {
  unsigned long long nonzero = 0, nonfinite = 0;
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    const uint16_t b = data[r * ld + c];
    nonzero += is_nonzero(b);
    nonfinite += is_nan_or_inf(dtype, b);
  }
  nonzero = detail::warp_sum(nonzero);
  nonfinite = detail::warp_sum(nonfinite);
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&acc->nonzero, nonzero);
    atomicAdd(&acc->nonfinite, nonfinite);
  }
}

}  // namespace

void fill_random(DType dtype, uint16_t* data, int64_t rows, int64_t cols, int64_t ld, Distribution dist,
                 uint64_t seed, uint16_t pad_bits, cudaStream_t stream) {
  if (rows <= 0 || ld <= 0) return;
  const int64_t total = rows * ld;
  const uint64_t key = mix64(seed * kGolden + kGolden);
  Draw draw{dist.lo, dist.hi - dist.lo, 0};
  if (dist.kind == Distribution::Kind::integers) draw.span = static_cast<uint32_t>(dist.hi - dist.lo) + 1;
  if (dtype == DType::bf16)
    fill_random_kernel<detail::BF16Traits>
        <<<blocks_for(total), kThreads, 0, stream>>>(data, rows, cols, ld, key, draw, pad_bits);
  else
    fill_random_kernel<detail::F16Traits>
        <<<blocks_for(total), kThreads, 0, stream>>>(data, rows, cols, ld, key, draw, pad_bits);
  check_cuda(cudaGetLastError(), "fill_random launch");
}

void fill_bits(uint16_t* data, size_t count, uint16_t bits, cudaStream_t stream) {
  if (count == 0) return;
  if ((bits >> 8) == (bits & 0xFF)) {
    check_cuda(cudaMemsetAsync(data, bits & 0xFF, count * sizeof(uint16_t), stream), "fill_bits memset");
    return;
  }
  const auto n = static_cast<int64_t>(count);
  fill_bits_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, bits);
  check_cuda(cudaGetLastError(), "fill_bits launch");
}

ValueStats value_stats(DType dtype, const uint16_t* data, int64_t rows, int64_t cols, int64_t ld,
                       cudaStream_t stream) {
  ValueStats stats;
  if (rows <= 0 || cols <= 0) return stats;
  stats.count = rows * cols;
  DeviceBuffer<StatsAccum> acc(1);
  check_cuda(cudaMemsetAsync(acc.data(), 0, acc.bytes(), stream), "value_stats memset");
  value_stats_kernel<<<blocks_for(stats.count), kThreads, 0, stream>>>(dtype, data, rows, cols, ld, acc.data());
  check_cuda(cudaGetLastError(), "value_stats launch");
  const StatsAccum host = download(acc.data(), 1, stream)[0];
  stats.nonzero = static_cast<int64_t>(host.nonzero);
  stats.nonfinite = static_cast<int64_t>(host.nonfinite);
  return stats;
}

}  // namespace tcgemm::support
