#include "support/elementwise.hpp"

#include <algorithm>
#include <cstdio>

#include "support/cuda_error.hpp"
#include "support/device_buffer.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_util.cuh"

namespace tcgemm::support {

namespace {

using detail::atomic_max_nonnegative;
using detail::warp_max;
using detail::warp_min;
using detail::warp_sum;

// The call as the kernels read it: raw 16-bit elements, GemmArgs' layout.
struct Problem {
  int op_a, op_b;  // 0: N, 1: T
  int64_t m, n, k;
  double alpha, beta;
  const uint16_t* a;
  int64_t lda;
  const uint16_t* b;
  int64_t ldb;
  const uint16_t* c0;  // C before the call; read only when beta != 0
  const uint16_t* c;   // the call's output
  int64_t ldc;
  OutputRounding out;
  // The fused epilogue (GemmArgs::bias, bias_type, activation).
  const void* bias;
  int bias_f32;
  int activation;
};

// The activation in float64 (the exact values the kernels' fp32 ones approximate).
__device__ double activate_f64(int activation, double x) {
  switch (activation) {
    case 1: return x < 0.0 ? 0.0 : x;
    case 2: return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
    case 3: return 0.5 * x * (1.0 + tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case 4: return x / (1.0 + exp(-x));
    default: return x;
  }
}

constexpr unsigned long long kNone = ~0ull;

struct Accum {
  unsigned long long nonfinite, beyond, beyond_rounded_twice;
  // Maxima of non-negative doubles as their bit patterns (for those the
  // unsigned order is the numeric order, so atomicMax works on them).
  unsigned long long worst_bits, worst_rounded_twice_bits;
  // Lowest row * n + col beyond each bound; kNone when none is.
  unsigned long long first, first_rounded_twice;
};

// One element's float64 reference and magnitude terms. fp16/bf16 products
// are exact in float64, and so is |a||b|; only the sums round (2^-53).
// One element's float64 reference, magnitude terms and bound. Without a fused
// epilogue, ElementTerms as the file comment of error_bound.hpp has them;
// with one, ref = act(z) + beta c0 and abs_ab holds Z (|alpha| sum |a||b| +
// |bias|), judged by fused_elementwise_bound (no fallback rounds twice there:
// both bounds are the same).
struct Judged {
  ElementTerms terms;
  double bound, bound_rounded_twice;
};

template <typename Traits>
__device__ ElementTerms element_terms(const Problem& p, int64_t row, int64_t col);

template <typename Traits>
__device__ Judged judge(const Problem& p, int64_t row, int64_t col) {
  ElementTerms t = element_terms<Traits>(p, row, col);
  if (p.bias == nullptr && p.activation == 0)
    return Judged{t, elementwise_bound(t, p.k, p.out), elementwise_bound_rounded_twice(t, p.k, p.out)};
  // z from the pieces: element_terms folded beta c0 into ref.
  double c0_term = 0.0;
  if (p.beta != 0.0) c0_term = p.beta * Traits::to_float(p.c0[row * p.ldc + col]);
  double bias = 0.0;
  if (p.bias != nullptr)
    bias = p.bias_f32 ? static_cast<const float*>(p.bias)[col]
                      : Traits::to_float(static_cast<const uint16_t*>(p.bias)[col]);
  const double z = t.ref - c0_term + bias;
  const double a = activate_f64(p.activation, z);
  const FusedTerms f{a + c0_term, t.abs_ab + fabs(bias), fabs(a), t.abs_c};
  const double bound = fused_elementwise_bound(f, p.k, static_cast<Activation>(p.activation), p.out);
  return Judged{ElementTerms{f.ref, f.abs_z, f.abs_c}, bound, bound};
}

template <typename Traits>
__device__ ElementTerms element_terms(const Problem& p, int64_t row, int64_t col) {
  double sum = 0.0, abs_sum = 0.0;
  for (int64_t kk = 0; kk < p.k; ++kk) {
    const double x = Traits::to_float(p.a[p.op_a == 0 ? row * p.lda + kk : kk * p.lda + row]);
    const double y = Traits::to_float(p.b[p.op_b == 0 ? kk * p.ldb + col : col * p.ldb + kk]);
    sum = fma(x, y, sum);
    abs_sum = fma(fabs(x), fabs(y), abs_sum);
  }
  ElementTerms t{p.alpha * sum, fabs(p.alpha) * abs_sum, 0.0};
  if (p.beta != 0.0) {  // beta == 0: C0 is not read (it may be NaN poison)
    const double c0 = Traits::to_float(p.c0[row * p.ldc + col]);
    t.ref += p.beta * c0;
    t.abs_c = fabs(p.beta * c0);
  }
  return t;
}

// One thread per output element (threads along a row, so B's loads coalesce
// for op_b = N), rows striding over the grid: gridDim.y is capped at 65535.
// Counts, maxima and first offenders are reduced per warp, then atomically.
template <typename Traits>
__global__ void elementwise_kernel(Problem p, Accum* acc) {
  const int64_t col = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  unsigned long long nonfinite = 0, beyond = 0, beyond2 = 0, first = kNone, first2 = kNone;
  double worst = 0.0, worst2 = 0.0;
  if (col < p.n) {
    for (int64_t row = blockIdx.y * int64_t{blockDim.y} + threadIdx.y; row < p.m; row += int64_t{gridDim.y} * blockDim.y) {
      const Judged j = judge<Traits>(p, row, col);
      const ElementTerms& t = j.terms;
      const double got = Traits::to_float(p.c[row * p.ldc + col]);
      const double diff = fabs(got - t.ref);
      const double bound = j.bound;
      const double bound2 = j.bound_rounded_twice;
      const unsigned long long index = static_cast<unsigned long long>(row * p.n + col);
      nonfinite += !isfinite(got);
      // Written so that a NaN difference counts as beyond.
      if (!(diff <= bound)) {
        ++beyond;
        first = min(first, index);
      }
      if (!(diff <= bound2)) {
        ++beyond2;
        first2 = min(first2, index);
      }
      if (isfinite(diff)) {  // bounds are > 0 (eta_out)
        worst = fmax(worst, diff / bound);
        worst2 = fmax(worst2, diff / bound2);
      }
    }
  }
  nonfinite = warp_sum(nonfinite);
  beyond = warp_sum(beyond);
  beyond2 = warp_sum(beyond2);
  worst = warp_max(worst);
  worst2 = warp_max(worst2);
  first = warp_min(first);
  first2 = warp_min(first2);
  if ((threadIdx.x & 31) != 0) return;
  if (nonfinite) atomicAdd(&acc->nonfinite, nonfinite);
  if (beyond) atomicAdd(&acc->beyond, beyond);
  if (beyond2) atomicAdd(&acc->beyond_rounded_twice, beyond2);
  atomic_max_nonnegative(&acc->worst_bits, worst);
  atomic_max_nonnegative(&acc->worst_rounded_twice_bits, worst2);
  if (first != kNone) atomicMin(&acc->first, first);
  if (first2 != kNone) atomicMin(&acc->first_rounded_twice, first2);
}

// One element again, for the failure message.
struct Detail {
  ElementTerms terms;
  double bound, bound_rounded_twice;
  uint16_t got_bits;
};
template <typename Traits>
__global__ void element_detail_kernel(Problem p, int64_t row, int64_t col, Detail* out) {
  const Judged j = judge<Traits>(p, row, col);
  *out = Detail{j.terms, j.bound, j.bound_rounded_twice, p.c[row * p.ldc + col]};
}

}  // namespace

std::string BoundViolation::str() const {
  if (!any()) return "none";
  const double diff = got - terms.ref;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "C[%lld,%lld] = %.8g (0x%04x), float64 reference %.10g, |c - ref| %.3e > bound %.3e (%.2fx); "
                "|alpha| sum|a||b| %.6g, |beta||c0| %.6g",
                static_cast<long long>(row), static_cast<long long>(col), got, got_bits, terms.ref,
                diff < 0 ? -diff : diff, bound, (diff < 0 ? -diff : diff) / bound, terms.abs_ab, terms.abs_c);
  return buf;
}

ElementwiseStats check_elementwise(const GemmArgs& args, const void* c0) {
  ElementwiseStats stats;
  stats.count = args.m * args.n;
  if (stats.count <= 0) return stats;
  const Problem p{static_cast<int>(args.op_a),
                  static_cast<int>(args.op_b),
                  args.m,
                  args.n,
                  args.k,
                  args.alpha,
                  args.beta,
                  static_cast<const uint16_t*>(args.a),
                  args.lda,
                  static_cast<const uint16_t*>(args.b),
                  args.ldb,
                  static_cast<const uint16_t*>(c0),
                  static_cast<const uint16_t*>(args.c),
                  args.ldc,
                  output_rounding(args.dtype),
                  args.bias,
                  args.bias_type == BiasType::f32 ? 1 : 0,
                  static_cast<int>(args.activation)};
  const bool bf16 = args.dtype == DType::bf16;
  cudaStream_t stream = args.stream;

  DeviceBuffer<Accum> acc(1);
  Accum init{};
  init.first = init.first_rounded_twice = kNone;
  check_cuda(cudaMemcpyAsync(acc.data(), &init, sizeof init, cudaMemcpyHostToDevice, stream), "elementwise check");
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((args.n + 31) / 32),
                  static_cast<unsigned>(std::min<int64_t>((args.m + 7) / 8, 65535)));
  using detail::BF16Traits;
  using detail::F16Traits;
  (bf16 ? elementwise_kernel<BF16Traits> : elementwise_kernel<F16Traits>)<<<grid, block, 0, stream>>>(p, acc.data());
  check_cuda(cudaGetLastError(), "elementwise check launch");
  const Accum r = download(acc.data(), 1, stream)[0];

  stats.nonfinite = static_cast<int64_t>(r.nonfinite);
  stats.beyond = static_cast<int64_t>(r.beyond);
  stats.beyond_rounded_twice = static_cast<int64_t>(r.beyond_rounded_twice);
  stats.worst = detail::double_from_bits(r.worst_bits);
  stats.worst_rounded_twice = detail::double_from_bits(r.worst_rounded_twice_bits);

  auto violation = [&](unsigned long long index, bool rounded_twice) {
    BoundViolation v;
    if (index == kNone) return v;
    v.row = static_cast<int64_t>(index / static_cast<unsigned long long>(args.n));
    v.col = static_cast<int64_t>(index % static_cast<unsigned long long>(args.n));
    DeviceBuffer<Detail> d(1);
    (bf16 ? element_detail_kernel<BF16Traits> : element_detail_kernel<F16Traits>)<<<1, 1, 0, stream>>>(
        p, v.row, v.col, d.data());
    check_cuda(cudaGetLastError(), "elementwise check detail launch");
    const Detail h = download(d.data(), 1, stream)[0];
    v.got_bits = h.got_bits;
    v.got = to_float(args.dtype, h.got_bits);
    v.terms = h.terms;
    v.bound = rounded_twice ? h.bound_rounded_twice : h.bound;
    return v;
  };
  stats.first = violation(r.first, false);
  stats.first_rounded_twice = violation(r.first_rounded_twice, true);
  return stats;
}

}  // namespace tcgemm::support
