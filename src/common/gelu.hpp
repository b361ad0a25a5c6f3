// gelu (the erf form) in fp32 for the fused epilogue, as one polynomial and
// one exp2: gelu(x) = x * Phi(x), Phi the standard normal distribution, with
//
//   Phi(-s) = 2^P(s),  s = min(|x|, 6),  Phi(x) = 1 - Phi(-|x|) for x >= 0,
//
// where P is a degree-6 polynomial fitted to log2(Phi(-s)) on [0, 6]
// (weighted minimax: the weight Phi(-s) makes it the absolute error of
// Phi that is smallest; fit error 1.1e-7 at most). One range, no branch and
// no select between ranges: 6 FMAs, one exp2, a subtraction, a select and a
// product, against about 24 instructions for erff's two ranges.
//
// Accuracy, measured over every float in [-12, 12] with |x| >= 2^-31
// (exp2 correctly rounded): within 2.2 u (|x| + |gelu(x)|), u = 2^-24, of
// the exact gelu. The device's exp2 (ex2.approx, within 2 ulp) adds at most
// 2 u |x| more, since Phi(-s) <= 1/2. The fused epilogue's error bound allows
// 8 u (support/error_bound.hpp); tests/host/test_error_bound.cpp checks this
// formula against float64 over a dense grid of x.
//
// Past s = 6, Phi(-6) = 1e-9: 1 - Phi rounds to 1, and x * Phi(-6) stands
// for x * Phi(x) within 1e-9 |x|. Special values: NaN stays NaN, +inf gives
// +inf, -inf gives -inf (the exact limit is 0; torch's formula gives NaN).
//
// Host and device share the polynomial (gelu_log2_tail) and the final step
// (gelu_from_tail), so the host tests check the code the kernels run; only
// the exp2 differs (std::exp2 on the host, ex2.approx on the device).
#pragma once

#include <cmath>

#include "common/tile_order.hpp"  // TCGEMM_HD

namespace tcgemm::detail {

// Where the polynomial stops: Phi(-x) for |x| past it is taken as Phi(-6).
inline constexpr float kGeluTailEnd = 6.0f;

// log2(Phi(-s)) for s in [0, kGeluTailEnd] (Horner, one fma a term).
TCGEMM_HD float gelu_log2_tail(float s) {
  float p = 1.917179226e-05f;
  p = fmaf(p, s, -6.585781805e-04f);
  p = fmaf(p, s, 7.754321344e-03f);
  p = fmaf(p, s, -5.296526157e-02f);
  p = fmaf(p, s, -4.590603436e-01f);
  p = fmaf(p, s, -1.151122027e+00f);
  return fmaf(p, s, -9.999996955e-01f);
}

// The argument of gelu_log2_tail for x.
TCGEMM_HD float gelu_tail_argument(float x) { return fminf(fabsf(x), kGeluTailEnd); }

// gelu(x) from tail = Phi(-min(|x|, kGeluTailEnd)).
TCGEMM_HD float gelu_from_tail(float x, float tail) { return x * (x >= 0.0f ? 1.0f - tail : tail); }

}  // namespace tcgemm::detail
