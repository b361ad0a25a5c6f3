// The element-wise error bound (support/error_bound.hpp) on hand-built
// elements, computed on the host the way the kernels compute them: what one
// rounding of an fp32 sum must pass, what a second rounding or a lost product
// must fail, and the edges (K == 0, alpha == 0, subnormal outputs); and the
// order bench keeps the worst of its rounds by (CompareStats::worse_than).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/gelu.hpp"
#include "common/gelu_tanh.hpp"
#include "common/silu.hpp"
#include "support/compare.hpp"
#include "support/error_bound.hpp"
#include "support/half_bits.hpp"

namespace tcgemm::support {
namespace {

// One output element: its row of op(A), its column of op(B), the scalars and
// C0's element, all exactly representable in `dtype`.
struct Element {
  DType dtype = DType::bf16;
  std::vector<float> a, b;
  float alpha = 1.0f, beta = 0.0f, c0 = 0.0f;

  int64_t k() const { return static_cast<int64_t>(a.size()); }
  std::string str() const {
    std::string s = std::string(to_string(dtype)) + " k=" + std::to_string(k());
    char buf[96];
    std::snprintf(buf, sizeof buf, " alpha=%.9g beta=%.9g c0=%.9g", alpha, beta, c0);
    return s + buf;
  }
};

float round_to(DType dtype, float v) { return to_float(dtype, from_float(dtype, v)); }

// fp32 products summed in K order one at a time (fmaf), as tcgemm's
// reference does; the kernels' tensor-core steps round no more often.
float fp32_sum(const Element& e) {
  float acc = 0.0f;
  for (int64_t i = 0; i < e.k(); ++i) acc = std::fmaf(e.a[i], e.b[i], acc);
  return acc;
}

// tcgemm's epilogue: alpha * acc, beta * c0 added by one fma, one rounding.
float rounded_once(const Element& e) {
  float x = e.alpha * fp32_sum(e);
  if (e.beta != 0.0f) x = std::fmaf(e.beta, e.c0, x);
  return round_to(e.dtype, x);
}

// alpha * AB rounded to the output type first, then beta * c0 added and
// rounded again (what cuBLAS does on some paths).
float rounded_twice(const Element& e) {
  const float t = round_to(e.dtype, e.alpha * fp32_sum(e));
  return round_to(e.dtype, std::fmaf(e.beta, e.c0, t));
}

// The float64 terms, as the GPU check computes them.
ElementTerms terms(const Element& e) {
  double sum = 0.0, abs_sum = 0.0;
  for (int64_t i = 0; i < e.k(); ++i) {
    sum = std::fma(static_cast<double>(e.a[i]), e.b[i], sum);
    abs_sum = std::fma(std::fabs(static_cast<double>(e.a[i])), std::fabs(static_cast<double>(e.b[i])), abs_sum);
  }
  ElementTerms t{e.alpha * sum, std::fabs(static_cast<double>(e.alpha)) * abs_sum, 0.0};
  if (e.beta != 0.0f) {
    t.ref += static_cast<double>(e.beta) * e.c0;
    t.abs_c = std::fabs(static_cast<double>(e.beta) * e.c0);
  }
  return t;
}

double error(const Element& e, float got) { return std::fabs(static_cast<double>(got) - terms(e).ref); }
double bound(const Element& e) { return elementwise_bound(terms(e), e.k(), output_rounding(e.dtype)); }
double bound_rounded_twice(const Element& e) {
  return elementwise_bound_rounded_twice(terms(e), e.k(), output_rounding(e.dtype));
}

Element random_element(std::mt19937_64& rng, DType dtype, int64_t k, float alpha, float beta) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Element e;
  e.dtype = dtype;
  e.alpha = alpha;
  e.beta = beta;
  for (int64_t i = 0; i < k; ++i) {
    e.a.push_back(round_to(dtype, u(rng)));
    e.b.push_back(round_to(dtype, u(rng)));
  }
  if (beta != 0.0f) e.c0 = round_to(dtype, u(rng));
  return e;
}

TEST(ErrorBound, GammaAndOutputRounding) {
  EXPECT_EQ(gamma_f32(0), 0.0);
  EXPECT_EQ(gamma_f32(1), 0x1p-24 / (1.0 - 0x1p-24));
  EXPECT_DOUBLE_EQ(gamma_f32(8193), 8193 * 0x1p-24 / (1.0 - 8193 * 0x1p-24));
  EXPECT_TRUE(std::isinf(gamma_f32(int64_t{1} << 24)));
  EXPECT_EQ(output_rounding(DType::f16).u, 1.0 / 2048);
  EXPECT_EQ(output_rounding(DType::bf16).u, 1.0 / 256);
  EXPECT_EQ(output_rounding(DType::f16).u, unit_roundoff(DType::f16));
  EXPECT_EQ(output_rounding(DType::bf16).u, unit_roundoff(DType::bf16));
  // Half the smallest subnormal of each type.
  EXPECT_EQ(output_rounding(DType::f16).eta, 0.5 * to_float(DType::f16, 0x0001));
  EXPECT_EQ(output_rounding(DType::bf16).eta, 0.5 * static_cast<double>(to_float(DType::bf16, 0x0001)));
  // Usable in constant expressions (and so on the GPU as written).
  static_assert(elementwise_bound(ElementTerms{0.0, 0.0, 0.0}, 0, output_rounding(DType::f16)) == 0x1p-25);
}

// Random elements computed as the kernels do, for every K size class,
// scalings exact in fp32 and not (0.1, 0.3), and cancelling sums: all within
// the bound, and the bound tight enough that some come close to it (the
// output rounding alone reaches ~u_out |ref|).
TEST(ErrorBound, OneRoundingOfAnFp32SumPasses) {
  std::mt19937_64 rng(2024);
  for (DType dtype : {DType::f16, DType::bf16}) {
    double worst = 0.0;
    for (int64_t k : {1, 2, 3, 15, 16, 17, 100, 1000, 8192})
      for (float alpha : {1.0f, 0.5f, -2.0f, 0.1f})
        for (float beta : {0.0f, 1.0f, -0.75f, 0.3f})
          for (int trial = 0; trial < (k > 1000 ? 20 : 200); ++trial) {
            const Element e = random_element(rng, dtype, k, alpha, beta);
            const double err = error(e, rounded_once(e)), b = bound(e);
            ASSERT_LE(err, b) << e.str() << " trial " << trial;
            worst = std::max(worst, err / b);
          }
    EXPECT_GT(worst, 0.5) << to_string(dtype) << ": the bound is looser than the output rounding it allows";
  }
}

// The constructed case: bf16, alpha * AB = 1 + 2^-9 rounds to 1 in bf16
// (half an ulp at 1 is 2^-8), and beta * c0 = -1 then cancels it: the
// twice-rounded result is 0, the exact one 2^-9, far beyond the bound; one
// rounding gets 2^-9 exactly. The looser bound admits the second rounding.
TEST(ErrorBound, SecondRoundingFailsTheBound) {
  Element e;
  e.dtype = DType::bf16;
  e.a = {1.0f, 1.0f};
  e.b = {1.0f, 0x1p-9f};
  e.beta = 1.0f;
  e.c0 = -1.0f;
  EXPECT_EQ(terms(e).ref, 0x1p-9);
  EXPECT_EQ(rounded_once(e), 0x1p-9f);
  EXPECT_EQ(rounded_twice(e), 0.0f);
  EXPECT_LE(error(e, rounded_once(e)), bound(e));
  EXPECT_GT(error(e, rounded_twice(e)), 100 * bound(e)) << "bound " << bound(e);
  EXPECT_LE(error(e, rounded_twice(e)), bound_rounded_twice(e));
}

// Random elements with beta * c0 cancelling most of alpha * AB: rounding
// twice breaks the bound in many of them, and never the looser bound.
TEST(ErrorBound, SecondRoundingOnRandomCancellingElements) {
  std::mt19937_64 rng(7);
  for (DType dtype : {DType::f16, DType::bf16}) {
    int beyond = 0, trials = 0;
    for (int64_t k : {1, 7, 64, 1000})
      for (int trial = 0; trial < 500; ++trial, ++trials) {
        Element e = random_element(rng, dtype, k, 1.0f, 1.0f);
        e.c0 = round_to(dtype, -fp32_sum(e) * 0.999f);
        const float got = rounded_twice(e);
        ASSERT_LE(error(e, got), bound_rounded_twice(e)) << e.str();
        beyond += error(e, got) > bound(e);
      }
    EXPECT_GT(beyond, trials / 10) << to_string(dtype) << ": " << beyond << " of " << trials;
  }
}

// A result that lost its largest product (as a skipped K step would) fails
// even the looser bound.
TEST(ErrorBound, LostProductFailsBothBounds) {
  std::mt19937_64 rng(11);
  for (DType dtype : {DType::f16, DType::bf16})
    for (int64_t k : {2, 16, 256})
      for (int trial = 0; trial < 100; ++trial) {
        const Element e = random_element(rng, dtype, k, 1.0f, 1.0f);
        int64_t largest = 0;
        for (int64_t i = 1; i < k; ++i)
          if (std::fabs(e.a[i] * e.b[i]) > std::fabs(e.a[largest] * e.b[largest])) largest = i;
        Element lost = e;
        lost.a[largest] = 0.0f;
        EXPECT_GT(error(e, rounded_once(lost)), bound_rounded_twice(e)) << e.str() << " trial " << trial;
      }
}

// K == 0: C = beta * c0, one fp32 product (inexact for beta = 0.1) and one
// rounding to the output type. The bound is then (1 + u_out) gamma_1
// |beta c0| + u_out |ref| + eta_out; one ulp off fails.
TEST(ErrorBound, KZeroIsBetaTimesC) {
  std::mt19937_64 rng(3);
  for (DType dtype : {DType::f16, DType::bf16}) {
    const OutputRounding out = output_rounding(dtype);
    for (float beta : {1.0f, -0.75f, 0.1f, 3.0f})
      for (int trial = 0; trial < 1000; ++trial) {
        const Element e = random_element(rng, dtype, 0, 1.0f, beta);
        const ElementTerms t = terms(e);
        EXPECT_EQ(t.abs_ab, 0.0);
        EXPECT_EQ(t.ref, static_cast<double>(beta) * e.c0);
        EXPECT_EQ(bound(e), (1.0 + out.u) * gamma_f32(1) * t.abs_c + out.u * std::fabs(t.ref) + out.eta);
        ASSERT_LE(error(e, rounded_once(e)), bound(e)) << e.str();
      }
    Element e;
    e.dtype = dtype;
    e.beta = 1.0f;
    e.c0 = 1.5f;
    const float one_ulp_off = to_float(dtype, static_cast<uint16_t>(from_float(dtype, 1.5f) + 1));
    EXPECT_EQ(error(e, 1.5f), 0.0);
    EXPECT_GT(error(e, one_ulp_off), bound(e)) << e.str();
  }
}

// alpha == 0: A and B contribute nothing, not even to the bound. With
// beta == 0 too the result must be zero: the bound is eta_out, below the
// smallest subnormal.
TEST(ErrorBound, AlphaZero) {
  for (DType dtype : {DType::f16, DType::bf16}) {
    Element e;
    e.dtype = dtype;
    e.alpha = 0.0f;
    e.a = {0.75f, -1.0f, 0.5f};
    e.b = {1.0f, 0.25f, -0.5f};
    EXPECT_EQ(terms(e).abs_ab, 0.0);
    EXPECT_EQ(bound(e), output_rounding(dtype).eta);
    EXPECT_LE(error(e, 0.0f), bound(e));
    EXPECT_LE(error(e, -0.0f), bound(e));
    EXPECT_GT(error(e, to_float(dtype, 0x0001)), bound(e)) << "the smallest subnormal";
    e.beta = -0.75f;
    e.c0 = 0.5f;
    EXPECT_EQ(rounded_once(e), -0.375f);
    EXPECT_LE(error(e, rounded_once(e)), bound(e));
    EXPECT_GT(error(e, to_float(dtype, static_cast<uint16_t>(from_float(dtype, -0.375f) + 1))), bound(e));
  }
}

// An fp16 result in the subnormal range is off by up to half its spacing
// (2^-25), far more than u_out relative: 1.5 * 2^-24 rounds (ties to even)
// to 2^-23. Only eta_out admits it.
TEST(ErrorBound, SubnormalOutputUsesTheAbsoluteTerm) {
  Element e;
  e.dtype = DType::f16;
  e.a = {1.5f * 0x1p-12f};
  e.b = {0x1p-12f};
  EXPECT_EQ(rounded_once(e), 0x1p-23f);
  EXPECT_EQ(error(e, rounded_once(e)), 0x1p-25);
  EXPECT_LE(error(e, rounded_once(e)), bound(e));
  EXPECT_GT(error(e, rounded_once(e)), bound(e) - output_rounding(DType::f16).eta);
}

}  // namespace
}  // namespace tcgemm::support

namespace tcgemm::support {
namespace {

// x / (1 + 2^a) as the kernels compute it (times_logistic), with the host's
// exp2 and an exact reciprocal.
float times_logistic(float x, float a) { return x * (1.0f / (1.0f + std::exp2(a))); }

// The activations as the kernels compute them (fp32, common/device/epilogue.cuh).
float activate_f32(Activation act, float x) {
  switch (act) {
    case Activation::relu: return x < 0.0f ? 0.0f : x;
    case Activation::gelu:  // the kernels' formula; their exp2 is ex2.approx (see GeluPolynomial below)
      return detail::gelu_from_tail(x, std::exp2(detail::gelu_log2_tail(detail::gelu_tail_argument(x))));
    // The kernels' formulas; their exp2 and reciprocal are approximate (see LogisticForms below).
    case Activation::gelu_tanh: return times_logistic(x, detail::gelu_tanh_exp2_argument(x));
    case Activation::silu: return times_logistic(x, detail::silu_exp2_argument(x));
    default: return x;
  }
}

// And exactly (float64).
double activate_f64(Activation act, double x) {
  switch (act) {
    case Activation::relu: return x < 0.0 ? 0.0 : x;
    case Activation::gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh: return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    case Activation::silu: return x / (1.0 + std::exp(-x));
    default: return x;
  }
}

// The fused epilogue computed as the kernels do: alpha * acc + bias, the
// activation, beta * c0 by one fma, one rounding to the output type.
float fused_rounded_once(const Element& e, float bias, Activation act) {
  float x = activate_f32(act, e.alpha * fp32_sum(e) + bias);
  if (e.beta != 0.0f) x = std::fmaf(e.beta, e.c0, x);
  return round_to(e.dtype, x);
}

FusedTerms fused_terms(const Element& e, float bias, Activation act) {
  const ElementTerms t = terms(e);  // ref = alpha * AB (+ beta c0), abs_ab, abs_c
  const double z = t.ref - (e.beta != 0.0f ? static_cast<double>(e.beta) * e.c0 : 0.0) + bias;
  const double a = activate_f64(act, z);
  return FusedTerms{a + (e.beta != 0.0f ? static_cast<double>(e.beta) * e.c0 : 0.0), t.abs_ab + std::fabs(bias),
                    std::fabs(a), t.abs_c};
}

const Activation kFusedActivations[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                        Activation::silu};

// f(x) for every 16th float x of either sign from 2^-31 up to the float
// whose bits are max_bits.
template <typename F>
void for_every_16th_float(uint32_t max_bits, F f) {
  for (const uint32_t sign : {0u, 0x80000000u})
    for (uint32_t bits = 0x30000000u; bits <= max_bits; bits += 16) {
      float x;
      const uint32_t b = bits | sign;
      std::memcpy(&x, &b, sizeof x);
      f(x);
    }
}

// The kernels' gelu (common/gelu.hpp) against float64 at every 16th float
// of [-12, 12] down to |x| = 2^-31 (every one of them was checked when the
// polynomial was fitted: 2.2 at most, exp2 correctly rounded): within 2.6 u
// (|x| + |gelu(x)|) with the host's exp2 (room for a libm's exp2f off by an
// ulp); the device's ex2.approx (2 ulp) may add 2 u |x|, and the fused bound
// allows 8 (activation_eval_ulps).
TEST(ErrorBound, GeluPolynomialWithinItsEvaluationError) {
  const double u = 0x1p-24;
  double worst = 0.0;
  float worst_x = 0.0f;
  for_every_16th_float(0x41400000u, [&](float x) {  // 2^-31 .. 12
    const double exact = 0.5 * static_cast<double>(x) * std::erfc(-static_cast<double>(x) / std::sqrt(2.0));
    const double got = activate_f32(Activation::gelu, x);
    const double ratio = std::fabs(got - exact) / (u * (std::fabs(static_cast<double>(x)) + std::fabs(exact)));
    if (ratio > worst) worst = ratio, worst_x = x;
  });
  EXPECT_LE(worst, 2.6) << "at x = " << worst_x;
  EXPECT_LE(worst + 2.0, activation_eval_ulps(Activation::gelu));
  // Special values.
  EXPECT_TRUE(std::isnan(activate_f32(Activation::gelu, NAN)));
  EXPECT_EQ(activate_f32(Activation::gelu, INFINITY), INFINITY);
  EXPECT_EQ(activate_f32(Activation::gelu, 100.0f), 100.0f);
  EXPECT_EQ(activate_f32(Activation::gelu, 0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(activate_f32(Activation::gelu, -0.0f)));
  // Past -6 the tail is Phi(-6) (1e-9): x * Phi(-6) stands within 1e-9 |x| of the exact value, far
  // inside the bound, and -inf stays -inf (torch's formula: NaN).
  EXPECT_LE(std::fabs(activate_f32(Activation::gelu, -100.0f)), 1e-7f);
  EXPECT_EQ(activate_f32(Activation::gelu, -INFINITY), -INFINITY);
}

// x * rcp(1 + 2^a) as the kernels compute it, a = argument(x), against
// `exact` (float64) at every 16th float of [-104, 104] down to |x| = 2^-31,
// with the device's approximations at their worst: ex2.approx off by 2 ulp
// and rcp.approx by 1, either way. The worst error in u (|x| + |exact|), and
// where.
template <typename Argument, typename Exact>
std::pair<double, float> worst_logistic_form_error(Argument argument, Exact exact) {
  const double u = 0x1p-24;
  double worst = 0.0;
  float worst_x = 0.0f;
  for_every_16th_float(0x42d00000u, [&](float x) {  // 2^-31 .. 104
    const double want = exact(static_cast<double>(x));
    const double scale = u * (std::fabs(static_cast<double>(x)) + std::fabs(want));
    const double e = std::exp2(static_cast<double>(argument(x)));
    for (const double de : {-2.0, 0.0, 2.0})
      for (const double dr : {-1.0, 0.0, 1.0}) {
        const float d = 1.0f + static_cast<float>(e * (1.0 + de * 0x1p-23));
        const float r = static_cast<float>((1.0 / static_cast<double>(d)) * (1.0 + dr * 0x1p-23));
        const double ratio = std::fabs(x * r - want) / scale;
        if (ratio > worst) worst = ratio, worst_x = x;
      }
  });
  return {worst, worst_x};
}

// The kernels' silu (common/silu.hpp) and tanh gelu (common/gelu_tanh.hpp),
// both x times a logistic: within the fused bound's 8 u (|x| + |act(x)|)
// (activation_eval_ulps).
TEST(ErrorBound, LogisticFormsWithinTheirEvaluationError) {
  const auto [silu, silu_x] = worst_logistic_form_error(detail::silu_exp2_argument,
                                                        [](double x) { return x / (1.0 + std::exp(-x)); });
  EXPECT_LE(silu, activation_eval_ulps(Activation::silu)) << "at x = " << silu_x;
  std::printf("silu: worst %.2f u (|x| + |silu(x)|) at x = %g\n", silu, silu_x);
  const auto [gelu_tanh, gelu_tanh_x] = worst_logistic_form_error(detail::gelu_tanh_exp2_argument, [](double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  });
  EXPECT_LE(gelu_tanh, activation_eval_ulps(Activation::gelu_tanh)) << "at x = " << gelu_tanh_x;
  std::printf("gelu_tanh: worst %.2f u (|x| + |gelu_tanh(x)|) at x = %g\n", gelu_tanh, gelu_tanh_x);
  // Special values: +inf stays +inf, NaN stays NaN, a large negative x gives -0 or a tiny value.
  for (const Activation act : {Activation::silu, Activation::gelu_tanh}) {
    EXPECT_EQ(activate_f32(act, INFINITY), INFINITY) << to_string(act);
    EXPECT_TRUE(std::isnan(activate_f32(act, NAN))) << to_string(act);
    EXPECT_LE(std::fabs(activate_f32(act, -100.0f)), 1e-30f) << to_string(act);
    EXPECT_EQ(activate_f32(act, 100.0f), 100.0f) << to_string(act);
  }
}

// Random elements of every K size class, with and without bias and beta,
// every activation: all within the fused bound, which some come close to.
TEST(ErrorBound, FusedEpilogueWithinItsBound) {
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<float> ub(-2.0f, 2.0f);
  for (DType dtype : {DType::f16, DType::bf16})
    for (Activation act : kFusedActivations) {
      double worst = 0.0;
      for (int64_t k : {1, 16, 17, 100, 1000, 4096})
        for (float alpha : {1.0f, 0.1f, -2.0f})
          for (float beta : {0.0f, 1.0f, 0.3f})
            for (int trial = 0; trial < (k > 1000 ? 10 : 100); ++trial) {
              const Element e = random_element(rng, dtype, k, alpha, beta);
              const float bias = trial % 3 == 0 ? 0.0f : round_to(dtype, ub(rng));
              const FusedTerms t = fused_terms(e, bias, act);
              const double err = std::fabs(static_cast<double>(fused_rounded_once(e, bias, act)) - t.ref);
              const double b = fused_elementwise_bound(t, e.k(), act, output_rounding(dtype));
              ASSERT_LE(err, b) << e.str() << " bias " << bias << " " << to_string(act);
              worst = std::max(worst, err / b);
            }
      EXPECT_GT(worst, 0.3) << to_string(dtype) << " " << to_string(act) << ": the bound is far looser than needed";
    }
}

// A second rounding (the activation applied to an already rounded GEMM
// result, as an unfused path does) can fail the fused bound where beta * c0
// cancels most of the activated value.
TEST(ErrorBound, FusedBoundCatchesARoundingBeforeTheActivation) {
  std::mt19937_64 rng(78);
  int caught = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Element e = random_element(rng, DType::bf16, 64, 1.0f, -1.0f);
    const Activation act = Activation::silu;
    const float exact_act = static_cast<float>(activate_f64(act, terms(e).ref + e.c0));  // ref - beta c0 = alpha AB
    e.c0 = round_to(DType::bf16, exact_act);  // beta * c0 cancels the activated value
    const FusedTerms t = fused_terms(e, 0.0f, act);
    const float twice =
        round_to(DType::bf16, std::fmaf(e.beta, e.c0, round_to(DType::bf16, activate_f32(act, round_to(DType::bf16, e.alpha * fp32_sum(e))))));
    const double b = fused_elementwise_bound(t, e.k(), act, output_rounding(DType::bf16));
    ASSERT_LE(std::fabs(static_cast<double>(fused_rounded_once(e, 0.0f, act)) - t.ref), b);
    caught += std::fabs(static_cast<double>(twice) - t.ref) > b;
  }
  EXPECT_GT(caught, 100) << "the bound should tell an extra rounding from one";
}

}  // namespace
}  // namespace tcgemm::support

namespace tcgemm::support {
namespace {

// bench --rounds N keeps each row's worst round: a round that saw NaN or Inf
// is never replaced by a finite one, however far that one is from cuBLAS.
CompareStats stats(int64_t identical, int64_t nonfinite, double norm_rel) {
  CompareStats s;
  s.count = 100;
  s.identical = identical;
  s.nonfinite_x = nonfinite;
  s.norm_rel = norm_rel;
  return s;
}

TEST(CompareStats, TheWorstRoundKeepsItsNaN) {
  const CompareStats nan_round = stats(99, 1, 1e-4), far_round = stats(10, 0, 0.5);
  EXPECT_TRUE(nan_round.worse_than(far_round));
  EXPECT_FALSE(far_round.worse_than(nan_round));
  EXPECT_TRUE(stats(99, 3, 1e-4).worse_than(nan_round));  // more NaN
  const CompareStats close_round = stats(100, 0, 0.0);
  EXPECT_TRUE(far_round.worse_than(close_round));
  EXPECT_FALSE(close_round.worse_than(close_round));
  EXPECT_TRUE(stats(100, 0, 1e-6).worse_than(close_round));  // the same bits share, a larger error
}

}  // namespace
}  // namespace tcgemm::support
