// gelu's tanh approximation in fp32 for the fused epilogue, as one exp2 and
// one reciprocal. With t = sqrt(2/pi) (x + 0.044715 x^3),
//
//   x/2 (1 + tanh(t)) = x / (1 + e^-2t) = x * rcp(1 + 2^a),
//   a = -2 log2(e) t = x (k1 + k3 x^2),  k1 = -2 log2(e) sqrt(2/pi),  k3 = 0.044715 k1,
//
// the same shape as silu (common/silu.hpp): on the device ex2.approx
// (within 2 ulp) and rcp.approx (within 1 ulp), two MUFU instructions and
// five others a value, against tanhf's two ranges, its own exponential and
// division (about 20 instructions and a branch; the fused epilogue cost
// 36-50% at one tile per CTA with it, docs/PERF.md).
//
// Accuracy against the exact formula (float64), in units u = 2^-24 of
// (|x| + |gelu_tanh(x)|), the fused epilogue's measure (support/error_bound.hpp
// allows 8): tests/host/test_error_bound.cpp checks every 16th float of
// [-104, 104] with both approximations at their worst. The argument's three
// roundings move 2^a by a few u |a| relatively, which the result weighs by
// x sigma'(2t), small where |a| is large.
//
// Special values: x = +inf gives +inf (2^-inf = 0); x = -inf gives NaN
// (-inf * rcp(inf)), as torch's formula does (-inf * (1 + tanh(-inf)) / 2);
// NaN stays NaN; a large negative x gives -0 (torch's: -0 too).
#pragma once

#include <cmath>

#include "common/tile_order.hpp"  // TCGEMM_HD

namespace tcgemm::detail {

// -2 log2(e) sqrt(2/pi) and 0.044715 times it, rounded to fp32.
inline constexpr float kGeluTanhK1 = -2.30220819f;
inline constexpr float kGeluTanhK3 = -0.102943242f;

// The exponent a of 2^a = e^-2t, with one fma so that host and device
// round it alike.
TCGEMM_HD float gelu_tanh_exp2_argument(float x) { return x * fmaf(kGeluTanhK3, x * x, kGeluTanhK1); }

}  // namespace tcgemm::detail
