// silu in fp32 for the fused epilogue, as one exp2 and one reciprocal:
//
//   silu(x) = x / (1 + e^-x) = x * rcp(1 + 2^a),  a = -log2(e) x (rounded to fp32),
//
// on the device ex2.approx (within 2 ulp) and rcp.approx (within 1 ulp): two
// MUFU instructions and three others a value, against expf's range reduction
// (about 8 instructions) and a full-range division's operand scaling.
//
// Accuracy against the exact silu, in units u = 2^-24 of (|x| + |silu(x)|),
// the fused epilogue's measure (support/error_bound.hpp allows 8): within
// 2.5 u with both approximations at their worst, over every 16th float of
// [-104, 104] (tests/host/test_error_bound.cpp, against float64). The
// argument's rounding moves e^-x by about |x| u relatively, which silu
// weighs by x^2 e^-x / (1 + e^-x)^2 (at most 0.44, near |x| = 2.4).
//
// Special values: x = +inf gives +inf (2^-inf = 0); x = -inf gives NaN
// (-inf * rcp(inf) = -inf * 0), as torch's x / (1 + exp(-x)) does; NaN stays NaN.
#pragma once

#include "common/tile_order.hpp"  // TCGEMM_HD

namespace tcgemm::detail {

// log2(e), rounded to fp32.
inline constexpr float kLog2E = 1.44269504088896340736f;

// The exponent a of 2^a = e^-x (to fp32 rounding of the product).
TCGEMM_HD float silu_exp2_argument(float x) { return -kLog2E * x; }

}  // namespace tcgemm::detail
