#include "device_buffers.hpp"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda_check.hpp"

namespace tcgemm::cli {

namespace {

constexpr int kThreads = 256;
// Grid-stride loops: enough blocks to fill any current GPU several times over.
constexpr int64_t kMaxBlocks = 4096;

int blocks_for(int64_t count) {
  const int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < kMaxBlocks ? (blocks > 0 ? blocks : 1) : kMaxBlocks);
}

// Elements travel as raw 16-bit patterns so "bit-identical" means exactly that;
// the traits convert to and from float with round-to-nearest-even.
struct F16Traits {
  __device__ static float to_float(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
  __device__ static uint16_t from_float(float v) { return __half_as_ushort(__float2half_rn(v)); }
};
struct BF16Traits {
  __device__ static float to_float(uint16_t bits) { return __bfloat162float(__ushort_as_bfloat16(bits)); }
  __device__ static uint16_t from_float(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
};

// SplitMix64's finalizer: a counter-based generator, so element i needs no
// state from element i - 1 and every thread fills its own elements.
__host__ __device__ inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

template <typename Traits>
__global__ void fill_uniform_kernel(uint16_t* out, int64_t count, uint64_t key, float lo, float scale) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix64(key + static_cast<uint64_t>(i) * kGolden);
    const float u = static_cast<float>(h >> 40) * 0x1p-24f;  // 24 random bits: [0, 1)
    out[i] = Traits::from_float(lo + scale * u);
  }
}

struct InputAccum {
  unsigned long long nonzero, nonfinite;
};

template <typename Traits>
__global__ void input_stats_kernel(const uint16_t* data, int64_t count, InputAccum* acc) {
  unsigned long long nonzero = 0, nonfinite = 0;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < count; i += int64_t{gridDim.x} * blockDim.x) {
    const float v = Traits::to_float(data[i]);
    nonzero += v != 0.0f;
    nonfinite += !isfinite(v);
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    nonzero += __shfl_down_sync(0xffffffffu, nonzero, offset);
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&acc->nonzero, nonzero);
    atomicAdd(&acc->nonfinite, nonfinite);
  }
}

struct CompareAccum {
  double diff_sq, ref_sq;
  unsigned long long pairs;  // pairs where both sides are finite
  unsigned long long nonfinite_x, nonfinite_ref, identical;
  // Maxima of non-negative doubles, kept as their bit patterns: for those,
  // the unsigned order is the numeric order, so atomicMax works on them.
  unsigned long long max_abs_bits, max_rel_bits;
};

// Pass 1 (kRelative = false): sums, counts and max |x - ref|. Pass 2 needs
// the RMS of ref from pass 1 for its floor, and computes the elementwise max.
template <typename Traits, bool kRelative>
__global__ void compare_kernel(const uint16_t* x, int64_t ldx, const uint16_t* ref, int64_t ld_ref, int64_t rows,
                               int64_t cols, double eps, CompareAccum* acc) {
  double diff_sq = 0.0, ref_sq = 0.0, max_abs = 0.0, max_rel = 0.0;
  unsigned long long pairs = 0, nonfinite_x = 0, nonfinite_ref = 0, identical = 0;
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total; i += int64_t{gridDim.x} * blockDim.x) {
    const int64_t r = i / cols, c = i - r * cols;
    const uint16_t xb = x[r * ldx + c], rb = ref[r * ld_ref + c];
    const float xf = Traits::to_float(xb), rf = Traits::to_float(rb);
    const bool x_ok = isfinite(xf), ref_ok = isfinite(rf);
    if (!kRelative) {
      nonfinite_x += !x_ok;
      nonfinite_ref += !ref_ok;
      identical += xb == rb;
    }
    if (!x_ok || !ref_ok) continue;
    // double: a bf16 difference can overflow float.
    const double d = fabs(static_cast<double>(xf) - static_cast<double>(rf));
    if (kRelative) {
      max_rel = fmax(max_rel, d / (fabs(static_cast<double>(rf)) + eps));
    } else {
      diff_sq += d * d;
      ref_sq += static_cast<double>(rf) * rf;
      max_abs = fmax(max_abs, d);
      ++pairs;
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    diff_sq += __shfl_down_sync(0xffffffffu, diff_sq, offset);
    ref_sq += __shfl_down_sync(0xffffffffu, ref_sq, offset);
    max_abs = fmax(max_abs, __shfl_down_sync(0xffffffffu, max_abs, offset));
    max_rel = fmax(max_rel, __shfl_down_sync(0xffffffffu, max_rel, offset));
    pairs += __shfl_down_sync(0xffffffffu, pairs, offset);
    nonfinite_x += __shfl_down_sync(0xffffffffu, nonfinite_x, offset);
    nonfinite_ref += __shfl_down_sync(0xffffffffu, nonfinite_ref, offset);
    identical += __shfl_down_sync(0xffffffffu, identical, offset);
  }
  if ((threadIdx.x & 31) != 0) return;
  if (kRelative) {
    atomicMax(&acc->max_rel_bits, static_cast<unsigned long long>(__double_as_longlong(max_rel)));
  } else {
    atomicAdd(&acc->diff_sq, diff_sq);
    atomicAdd(&acc->ref_sq, ref_sq);
    atomicAdd(&acc->pairs, pairs);
    atomicAdd(&acc->nonfinite_x, nonfinite_x);
    atomicAdd(&acc->nonfinite_ref, nonfinite_ref);
    atomicAdd(&acc->identical, identical);
    atomicMax(&acc->max_abs_bits, static_cast<unsigned long long>(__double_as_longlong(max_abs)));
  }
}

template <typename Accum>
Accum download(const DeviceBuffer& buffer, cudaStream_t stream) {
  Accum host{};
  CHECK_CUDA(cudaMemcpyAsync(&host, buffer.get(), sizeof(Accum), cudaMemcpyDeviceToHost, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return host;
}

double from_bits(unsigned long long bits) {
  double v;
  static_assert(sizeof v == sizeof bits);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t status = cudaMalloc(&ptr_, bytes);
  if (status != cudaSuccess) {
    std::fflush(stdout);
    std::fprintf(stderr, "tcgemm: cudaMalloc of %.1f MiB failed: %s (%s)\n", bytes / 1048576.0,
                 cudaGetErrorName(status), cudaGetErrorString(status));
    std::exit(1);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) CHECK_CUDA(cudaFree(ptr_));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) CHECK_CUDA(cudaFree(ptr_));
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void fill_uniform(void* data, DType dtype, int64_t count, uint64_t seed, float lo, float hi, cudaStream_t stream) {
  if (count <= 0) return;
  const uint64_t key = mix64(seed * kGolden + kGolden);
  auto* out = static_cast<uint16_t*>(data);
  if (dtype == DType::bf16)
    fill_uniform_kernel<BF16Traits><<<blocks_for(count), kThreads, 0, stream>>>(out, count, key, lo, hi - lo);
  else
    fill_uniform_kernel<F16Traits><<<blocks_for(count), kThreads, 0, stream>>>(out, count, key, lo, hi - lo);
  CHECK_LAUNCH();
}

void fill_nan(void* data, int64_t count, cudaStream_t stream) {
  if (count <= 0) return;
  // 0xFFFF: fp16 exponent all ones with a non-zero mantissa, and the same for
  // bf16, so one byte pattern poisons either type.
  CHECK_CUDA(cudaMemsetAsync(data, 0xFF, static_cast<size_t>(count) * kElementBytes, stream));
}

InputStats input_stats(const void* data, DType dtype, int64_t count, cudaStream_t stream) {
  InputStats stats;
  stats.count = count;
  if (count <= 0) return stats;
  DeviceBuffer acc(sizeof(InputAccum));
  CHECK_CUDA(cudaMemsetAsync(acc.get(), 0, sizeof(InputAccum), stream));
  const auto* in = static_cast<const uint16_t*>(data);
  auto* out = static_cast<InputAccum*>(acc.get());
  if (dtype == DType::bf16)
    input_stats_kernel<BF16Traits><<<blocks_for(count), kThreads, 0, stream>>>(in, count, out);
  else
    input_stats_kernel<F16Traits><<<blocks_for(count), kThreads, 0, stream>>>(in, count, out);
  CHECK_LAUNCH();
  const InputAccum host = download<InputAccum>(acc, stream);
  stats.nonzero = static_cast<int64_t>(host.nonzero);
  stats.nonfinite = static_cast<int64_t>(host.nonfinite);
  return stats;
}

CompareStats compare(DType dtype, const void* x, int64_t ldx, const void* ref, int64_t ld_ref, int64_t rows,
                     int64_t cols, cudaStream_t stream) {
  CompareStats stats;
  stats.count = rows * cols;
  if (stats.count <= 0) return stats;
  DeviceBuffer acc(sizeof(CompareAccum));
  CHECK_CUDA(cudaMemsetAsync(acc.get(), 0, sizeof(CompareAccum), stream));
  const auto* xs = static_cast<const uint16_t*>(x);
  const auto* rs = static_cast<const uint16_t*>(ref);
  auto* out = static_cast<CompareAccum*>(acc.get());
  const int blocks = blocks_for(stats.count);

  auto launch = [&](auto kernel, double eps) {
    kernel<<<blocks, kThreads, 0, stream>>>(xs, ldx, rs, ld_ref, rows, cols, eps, out);
    CHECK_LAUNCH();
  };
  const bool bf16 = dtype == DType::bf16;

  launch(bf16 ? compare_kernel<BF16Traits, false> : compare_kernel<F16Traits, false>, 0.0);
  const CompareAccum first = download<CompareAccum>(acc, stream);
  const double rms = first.pairs ? std::sqrt(first.ref_sq / static_cast<double>(first.pairs)) : 0.0;
  launch(bf16 ? compare_kernel<BF16Traits, true> : compare_kernel<F16Traits, true>, std::fmax(kElemEps * rms, DBL_MIN));
  const CompareAccum second = download<CompareAccum>(acc, stream);

  stats.nonfinite_x = static_cast<int64_t>(first.nonfinite_x);
  stats.nonfinite_ref = static_cast<int64_t>(first.nonfinite_ref);
  stats.identical = static_cast<int64_t>(first.identical);
  stats.max_abs = from_bits(first.max_abs_bits);
  stats.max_elem_rel = from_bits(second.max_rel_bits);
  if (first.ref_sq > 0.0)
    stats.norm_rel = std::sqrt(first.diff_sq / first.ref_sq);
  else
    stats.norm_rel = first.diff_sq > 0.0 ? INFINITY : 0.0;
  return stats;
}

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can treat the write as a no-op.
  CHECK_CUDA(cudaMemsetAsync(scratch_.get(), value_++, scratch_.bytes(), stream));
}

}  // namespace tcgemm::cli
