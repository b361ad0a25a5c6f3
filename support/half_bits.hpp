// fp16 and bf16 as raw 16-bit patterns: the NaN poison values, classification
// (shared by the kernels and the host), and host conversions that need no
// cuda_fp16.h, so host code can print and recompute values.
#pragma once

#include <cstdint>

#include "tcgemm/tcgemm.hpp"

#if defined(__CUDACC__)
#define TCGEMM_SUPPORT_HOST_DEVICE __host__ __device__
#else
#define TCGEMM_SUPPORT_HOST_DEVICE
#endif

namespace tcgemm::support {

// All bits set: exponent all ones and a non-zero mantissa in fp16 and bf16
// alike, so one memset byte (0xFF) poisons either type.
inline constexpr uint16_t kNanAllOnes = 0xFFFF;

// A quiet NaN with a payload that no arithmetic produces (results are
// canonical NaNs), so "still holds the poison" tells "never written" apart
// from "a NaN was written".
constexpr uint16_t poison_bits(DType dtype) { return dtype == DType::f16 ? 0x7E5A : 0x7FDA; }

TCGEMM_SUPPORT_HOST_DEVICE constexpr bool is_nan_or_inf(DType dtype, uint16_t bits) {
  return dtype == DType::f16 ? (bits & 0x7C00) == 0x7C00 : (bits & 0x7F80) == 0x7F80;
}

// Zero of either sign is the only pattern with no bit set below the sign.
TCGEMM_SUPPORT_HOST_DEVICE constexpr bool is_nonzero(uint16_t bits) { return (bits & 0x7FFF) != 0; }

// Unit roundoff of the type: 2^-11 (fp16), 2^-8 (bf16).
constexpr double unit_roundoff(DType dtype) { return dtype == DType::f16 ? 1.0 / 2048 : 1.0 / 256; }

// Host conversions, round to nearest even.
float to_float(DType dtype, uint16_t bits);
uint16_t from_float(DType dtype, float value);

}  // namespace tcgemm::support
