// Device memory for the tool: owned buffers, random fills, NaN poison, result
// comparison and the L2 flush. Everything runs on the GPU so that checking a
// 16384 x 8192 output costs milliseconds, not a copy to the host.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

// fp16 and bf16 are both two bytes.
inline constexpr size_t kElementBytes = 2;

// One cudaMalloc allocation, freed on destruction. Zero bytes holds nullptr.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Fills `count` elements with values uniform in [lo, hi), rounded to nearest.
// Element i depends only on (seed, i): the same seed gives the same matrix on
// every run and every GPU, so a failure can be reproduced from its seed.
void fill_uniform(void* data, DType dtype, int64_t count, uint64_t seed, float lo, float hi, cudaStream_t stream);

// Fills with NaN (all bits set is a NaN in both fp16 and bf16), so an output
// element the kernel never writes cannot pass for a result.
void fill_nan(void* data, int64_t count, cudaStream_t stream);

// What an input holds: tests must never run on zeros or non-finite data.
struct InputStats {
  int64_t count = 0;
  int64_t nonzero = 0;
  int64_t nonfinite = 0;
};
InputStats input_stats(const void* data, DType dtype, int64_t count, cudaStream_t stream);

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
};
// The floor under |ref| in the elementwise ratio, relative to ref's RMS: with
// random signs some outputs land near zero, and a ratio against ~0 says
// nothing about the kernel.
inline constexpr double kElemEps = 1e-3;
CompareStats compare(DType dtype, const void* x, int64_t ldx, const void* ref, int64_t ld_ref, int64_t rows,
                     int64_t cols, cudaStream_t stream);

// Evicts the operands from L2 between timed launches by writing a scratch
// buffer several times larger than L2 (the leaderboard writes 256 MB too).
class L2Flusher {
 public:
  explicit L2Flusher(size_t bytes = size_t{256} << 20) : scratch_(bytes) {}
  void flush(cudaStream_t stream);
  size_t bytes() const { return scratch_.bytes(); }

 private:
  DeviceBuffer scratch_;
  unsigned char value_ = 0;
};

}  // namespace tcgemm::cli
