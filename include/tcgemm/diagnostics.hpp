// Measurements that put GEMM timings in context (used by `tcgemm bench`).
#pragma once

#include "tcgemm/tcgemm.hpp"

namespace tcgemm {
inline namespace TCGEMM_ABI_NAMESPACE {

// The sustained dense tensor-core rate of the current GPU, measured now: every
// SM runs a bare loop of wgmma m64n256k16 (2 warpgroups, operands resident in
// shared memory, nothing else) for about `milliseconds`. This is the ceiling
// "% of peak" is reported against: the datasheet rate is never reached once
// clocks settle under tensor load. Returns TFLOP/s, or a negative value when
// the current device has no sm90 kernel (then `why`, if given, says so).
double measure_peak_tflops(DType dtype, double milliseconds = 200.0, std::string* why = nullptr) noexcept;

}  // inline namespace TCGEMM_ABI_NAMESPACE
}  // namespace tcgemm
