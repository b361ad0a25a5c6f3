#include "support/half_bits.hpp"

#include <cmath>
#include <cstring>

namespace tcgemm::support {

namespace {
float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
}  // namespace

float to_float(DType dtype, uint16_t b) {
  if (dtype == DType::bf16) return float_from_bits(static_cast<uint32_t>(b) << 16);
  const uint32_t sign = static_cast<uint32_t>(b & 0x8000) << 16;
  const uint32_t exp = (b >> 10) & 0x1F, mant = b & 0x3FF;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_from_bits(sign | 0x7F800000u | (mant << 13));
  return float_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t from_float(DType dtype, float v) {
  const uint32_t x = bits_from_float(v);
  if (dtype == DType::bf16) {
    if (std::isnan(v)) return static_cast<uint16_t>((x >> 16) | 0x40);
    return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
  }
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  if (std::isnan(v)) return sign | 0x7E00;
  const float a = std::fabs(v);
  if (a >= 65520.0f) return sign | 0x7C00;  // 65520 is the midpoint to infinity; ties go to even (inf)
  if (a < 6.103515625e-05f) {               // below 2^-14: subnormal, in units of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  const uint32_t xa = bits_from_float(a);
  const uint32_t exp = (xa >> 23) - 127 + 15, mant = xa & 0x7FFFFF;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is correct
  return sign | static_cast<uint16_t>(h);
}

}  // namespace tcgemm::support
