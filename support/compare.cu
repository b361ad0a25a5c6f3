#include "support/compare.hpp"

#include <cfloat>
#include <cmath>

#include "support/cuda_error.hpp"
#include "support/device_buffer.hpp"
#include "support/kernel_util.cuh"

namespace tcgemm::support {

namespace {

using detail::atomic_max_nonnegative;
using detail::blocks_for;
using detail::kThreads;
using detail::warp_max;
using detail::warp_sum;

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
  if (kRelative) {
    max_rel = warp_max(max_rel);
    if ((threadIdx.x & 31) == 0)
      atomic_max_nonnegative(&acc->max_rel_bits, max_rel);
    return;
  }
  diff_sq = warp_sum(diff_sq);
  ref_sq = warp_sum(ref_sq);
  max_abs = warp_max(max_abs);
  pairs = warp_sum(pairs);
  nonfinite_x = warp_sum(nonfinite_x);
  nonfinite_ref = warp_sum(nonfinite_ref);
  identical = warp_sum(identical);
  if ((threadIdx.x & 31) != 0) return;
  atomicAdd(&acc->diff_sq, diff_sq);
  atomicAdd(&acc->ref_sq, ref_sq);
  atomicAdd(&acc->pairs, pairs);
  atomicAdd(&acc->nonfinite_x, nonfinite_x);
  atomicAdd(&acc->nonfinite_ref, nonfinite_ref);
  atomicAdd(&acc->identical, identical);
  atomic_max_nonnegative(&acc->max_abs_bits, max_abs);
}

}  // namespace

CompareStats compare(DType dtype, const uint16_t* x, int64_t ldx, const uint16_t* ref, int64_t ld_ref, int64_t rows,
                     int64_t cols, cudaStream_t stream) {
  CompareStats stats;
  stats.count = rows * cols;
  if (stats.count <= 0) return stats;
  DeviceBuffer<CompareAccum> acc(1);
  check_cuda(cudaMemsetAsync(acc.data(), 0, acc.bytes(), stream), "compare memset");
  const unsigned blocks = blocks_for(stats.count);

  auto run = [&](auto kernel, double eps) {
    kernel<<<blocks, kThreads, 0, stream>>>(x, ldx, ref, ld_ref, rows, cols, eps, acc.data());
    check_cuda(cudaGetLastError(), "compare launch");
    return download(acc.data(), 1, stream)[0];
  };
  const bool bf16 = dtype == DType::bf16;

  using detail::BF16Traits;
  using detail::F16Traits;
  const CompareAccum first = run(bf16 ? compare_kernel<BF16Traits, false> : compare_kernel<F16Traits, false>, 0.0);
  const double rms = first.pairs ? std::sqrt(first.ref_sq / static_cast<double>(first.pairs)) : 0.0;
  const CompareAccum second = run(bf16 ? compare_kernel<BF16Traits, true> : compare_kernel<F16Traits, true>,
                                  std::fmax(kElemEps * rms, DBL_MIN));

  stats.nonfinite_x = static_cast<int64_t>(first.nonfinite_x);
  stats.nonfinite_ref = static_cast<int64_t>(first.nonfinite_ref);
  stats.identical = static_cast<int64_t>(first.identical);
  stats.max_abs = detail::double_from_bits(first.max_abs_bits);
  stats.max_elem_rel = detail::double_from_bits(second.max_rel_bits);
  if (first.ref_sq > 0.0)
    stats.norm_rel = std::sqrt(first.diff_sq / first.ref_sq);
  else
    stats.norm_rel = first.diff_sq > 0.0 ? INFINITY : 0.0;
  return stats;
}

}  // namespace tcgemm::support
