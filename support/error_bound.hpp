// The element-wise error bound that every output of tcgemm's kernels meets,
// as one formula for the host and the GPU (the GPU check in
// support/elementwise.hpp and the host unit tests use this one definition).
//
// For C = alpha * op(A) op(B) + beta * C0, output element (i, j):
//
//   |c - ref| <= (1 + u_out) gamma_{K+1} (|alpha| sum_k |a_ik| |b_kj| + |beta| |c0_ij|) + u_out |ref| + eta_out
//
//   ref      the exact value (computed in float64 by the check)
//   gamma_n  n u / (1 - n u), u = 2^-24: n fp32 roundings in a row
//   u_out    the output type's unit roundoff: 2^-11 fp16, 2^-8 bf16
//   eta_out  half the output type's smallest subnormal: 2^-25 fp16, 2^-134 bf16
//
// Why these terms. Products of fp16/bf16 values are exact in fp32, so the
// fp32 part rounds only sums and scalings: at most K - 1 additions after the
// first product, the scaling by alpha and the addition of beta * c0, K + 1
// roundings in all (K == 0: beta * c0 alone, one). A fp32 result y built so
// is within E = gamma_{K+1} (|alpha| sum |a||b| + |beta| |c0|) of ref (Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., sections 2.2 and
// 3.1; the additions in any order or grouping, so also tensor-core steps
// that add 16 products to the accumulator with fewer roundings). y is
// then rounded once to the output type, fl(y) = y (1 + d) + e with |d| <=
// u_out and |e| <= eta_out (the absolute part for subnormal outputs, where no
// relative bound holds), so |fl(y) - ref| <= E + u_out (|ref| + E) + eta_out:
// the bound. fp32 underflow is left out: with non-zero inputs of magnitude
// 2^-24 or more no product comes near fp32's subnormals. So is the
// float64 reference's own error (at most about K 2^-53 times the magnitude
// term, 2^-29 of the bound's first term).
//
// What the bound catches: a result that rounds alpha * op(A) op(B) to
// fp16/bf16 before adding beta * C (a second rounding) can be off by u_out
// |alpha| sum |a||b|, far beyond the bound for an element where beta * c0
// cancels most of alpha * AB; a norm-wise bound cannot see that in a few
// elements. elementwise_bound_rounded_twice() allows exactly that one extra
// rounding: results that must only be no worse than such a computation
// (cuBLAS's own, on some paths) are held to it.
#pragma once

#include <cstdint>

#include "support/half_bits.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::support {

// fp32's unit roundoff.
inline constexpr double kUnitRoundoffF32 = 0x1p-24;

// gamma_n = n u / (1 - n u) for fp32's u; infinite once n u >= 1 (K >= 2^24,
// far beyond any fp32 accumulation worth bounding).
TCGEMM_SUPPORT_HOST_DEVICE constexpr double gamma_f32(int64_t n) {
  const double nu = static_cast<double>(n) * kUnitRoundoffF32;
  return nu < 1.0 ? nu / (1.0 - nu) : __builtin_huge_val();
}

// The one rounding to the output type: relative (u) and, in the subnormal
// range, absolute (eta).
struct OutputRounding {
  double u;
  double eta;
};
constexpr OutputRounding output_rounding(DType dtype) {
  return dtype == DType::f16 ? OutputRounding{0x1p-11, 0x1p-25} : OutputRounding{0x1p-8, 0x1p-134};
}

// What the bound of one output element is made of, all in float64.
struct ElementTerms {
  double ref;     // alpha * sum_k a_ik b_kj + beta * c0_ij
  double abs_ab;  // |alpha| * sum_k |a_ik| |b_kj|
  double abs_c;   // |beta| * |c0_ij| (0 when beta == 0: C0 is not read)
};

// The bound of the file comment, for an element of a GEMM with inner
// dimension k.
TCGEMM_SUPPORT_HOST_DEVICE constexpr double elementwise_bound(const ElementTerms& t, int64_t k, OutputRounding out) {
  const double abs_ref = t.ref < 0.0 ? -t.ref : t.ref;
  return (1.0 + out.u) * gamma_f32(k + 1) * (t.abs_ab + t.abs_c) + out.u * abs_ref + out.eta;
}

// The bound plus one more rounding of alpha * op(A) op(B) to the output
// type before beta * c0 is added: that rounding's error, u_out |alpha| sum
// |a||b| + eta_out, and (2 u_out of it) what it adds to the second rounding
// and to the fp32 addition between the two.
TCGEMM_SUPPORT_HOST_DEVICE constexpr double elementwise_bound_rounded_twice(const ElementTerms& t, int64_t k,
                                                                            OutputRounding out) {
  return elementwise_bound(t, k, out) + out.u * (1.0 + 2.0 * out.u) * t.abs_ab + out.eta;
}

// The fused epilogue, C = act(alpha * op(A) op(B) + bias) + beta * C0
// (GemmArgs::bias, activation). With z = alpha * sum_k a_ik b_kj + bias_j:
//
//   |c - ref| <= E + u_out (|ref| + E) + eta_out, where
//   E = L gamma_{K+1} Z + c_eval u (Z + |act(z)|) + gamma_2 (|act(z)| + L gamma_{K+1} Z + c_eval u (Z + |act(z)|)
//                                                        + |beta c0|)
//
//   ref = act(z) + beta * c0 exactly (float64), Z = |alpha| sum |a||b| + |bias_j| (>= |z|),
//   L the activation's Lipschitz constant (max |act'|: 1 for none and relu,
//   1.13 for both gelus, 1.1 for silu), c_eval the fp32 evaluation error of
//   the activation in units of u (|z| + |act(z)|): 0 for none and relu, 8
//   for the others (gelu's polynomial and exp2 are within 4.2,
//   src/common/gelu.hpp; silu's and the tanh gelu's exp2 and reciprocal
//   within 2.5, src/common/silu.hpp and src/common/gelu_tanh.hpp).
//
// Why: the fp32 z is within gamma_{K+1} Z of z (K - 1 additions, then the
// scaling and the bias in one fma: K roundings, counted as K + 1); act moves that error by at most L times and adds
// its own evaluation error; beta * c0 is added by one fma (one rounding: within
// gamma_2 of the magnitudes, with slack); then the one rounding to the output
// type as in elementwise_bound.
struct FusedTerms {
  double ref;      // act(z) + beta * c0
  double abs_z;    // Z: |alpha| sum |a||b| + |bias|
  double abs_act;  // |act(z)|
  double abs_c;    // |beta * c0| (0 when beta == 0)
};

TCGEMM_SUPPORT_HOST_DEVICE constexpr double activation_lipschitz(Activation a) {
  return a == Activation::gelu || a == Activation::gelu_tanh ? 1.13 : a == Activation::silu ? 1.1 : 1.0;
}
TCGEMM_SUPPORT_HOST_DEVICE constexpr double activation_eval_ulps(Activation a) {
  return a == Activation::none || a == Activation::relu ? 0.0 : 8.0;
}

TCGEMM_SUPPORT_HOST_DEVICE constexpr double fused_elementwise_bound(const FusedTerms& t, int64_t k, Activation act,
                                                                    OutputRounding out) {
  const double e_z = activation_lipschitz(act) * gamma_f32(k + 1) * t.abs_z;
  const double e_act = activation_eval_ulps(act) * kUnitRoundoffF32 * (t.abs_z + t.abs_act);
  const double e = e_z + e_act + gamma_f32(2) * (t.abs_act + e_z + e_act + t.abs_c);
  const double abs_ref = t.ref < 0.0 ? -t.ref : t.ref;
  return e + out.u * (abs_ref + e) + out.eta;
}

}  // namespace tcgemm::support
