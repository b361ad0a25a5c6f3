// One fp16/bf16 matrix against another, on the GPU: checking a 16384 x 8192
// output costs milliseconds, not a copy to the host. Waits for `stream`;
// failures throw CudaError.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::support {

// x against ref over a rows x cols row-major window (leading dimensions ldx,
// ld_ref). Sums skip pairs where either side is not finite; those are counted.
struct CompareStats {
  int64_t count = 0;
  int64_t nonfinite_x = 0;    // NaN/Inf in x: unwritten (poisoned) output or overflow
  int64_t nonfinite_ref = 0;
  int64_t identical = 0;      // equal bit patterns
  double norm_rel = 0.0;      // ||x - ref||_F / ||ref||_F
  double max_elem_rel = 0.0;  // max |x - ref| / (|ref| + eps), eps = kElemEps * rms(ref)
  double max_abs = 0.0;       // max |x - ref|

  bool finite() const { return nonfinite_x == 0 && nonfinite_ref == 0; }
  double identical_fraction() const { return count ? static_cast<double>(identical) / count : 1.0; }
  // Adds another window's figures (one problem of a batch): counts summed,
  // the maxima kept. (norm_rel: the worst window's, not the whole's norm.)
  void merge(const CompareStats& o) {
    count += o.count;
    nonfinite_x += o.nonfinite_x;
    nonfinite_ref += o.nonfinite_ref;
    identical += o.identical;
    norm_rel = std::max(norm_rel, o.norm_rel);
    max_elem_rel = std::max(max_elem_rel, o.max_elem_rel);
    max_abs = std::max(max_abs, o.max_abs);
  }
  // Whether this comparison is worse than `o`, for keeping the worst of
  // several rounds: NaN or Inf (more of them worse) before any finite
  // result, then fewer identical elements, then a larger norm-wise error.
  // (A round that saw NaN is never replaced by a finite one.)
  bool worse_than(const CompareStats& o) const {
    const int64_t mine = nonfinite_x + nonfinite_ref, theirs = o.nonfinite_x + o.nonfinite_ref;
    if (mine != theirs) return mine > theirs;
    if (identical_fraction() != o.identical_fraction()) return identical_fraction() < o.identical_fraction();
    return norm_rel > o.norm_rel;
  }
};
// The floor under |ref| in the elementwise ratio, relative to ref's RMS: with
// random signs some outputs land near zero, and a ratio against ~0 says
// nothing about the kernel.
inline constexpr double kElemEps = 1e-3;
// The normwise relative error (CompareStats::norm_rel) allowed against the
// fp32-accumulating reference for inputs uniform in (-1, 1): a few units of
// the output's rounding (4.1 u for fp16, 2.6 u for bf16).
constexpr double normwise_tolerance(DType dtype) { return dtype == DType::bf16 ? 1e-2 : 2e-3; }
CompareStats compare(DType dtype, const uint16_t* x, int64_t ldx, const uint16_t* ref, int64_t ld_ref, int64_t rows,
                     int64_t cols, cudaStream_t stream = nullptr);

}  // namespace tcgemm::support
