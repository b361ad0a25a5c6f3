// Device-side helpers for the GPU tests: buffers, seeded random fills, NaN
// poisoning and value counts. Declared here in plain C++ (the test files are
// host code); the kernels live in gpu_util.cu.
//
// Every helper synchronizes and throws std::runtime_error on a CUDA error, so
// a failure inside a helper fails the test that called it with the CUDA error
// named, instead of surfacing later in an unrelated test.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::test {

// What to fill inputs with.
//   uniform_pm1: uniform in (-1, 1), rounded to the dtype: numeric mode.
//   uniform_01:  uniform in [0, 1), as matmul_v2's inputs (torch uniform_).
//   small_int:   integers in [-2, 2]: every product and partial sum is exact
//                in fp32, so any correct kernel equals the reference bit for bit.
enum class Fill { uniform_pm1, uniform_01, small_int };
const char* to_string(Fill fill);

// A quiet NaN with a payload that no arithmetic produces (results are
// canonical NaNs), so "still holds the poison" tells "never written" apart
// from "a NaN was written".
uint16_t poison_bits(DType dtype);

// Throws std::runtime_error("<what>: <cuda error>") unless err is cudaSuccess.
void check_cuda(cudaError_t err, const std::string& what);

// Device memory for `elements` 16-bit values.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t elements);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uint16_t* data() const { return ptr_; }
  size_t size() const { return size_; }

 private:
  uint16_t* ptr_ = nullptr;
  size_t size_ = 0;
};

// Fills the rows x cols matrix at `base` (row-major, leading dimension ld)
// from a counter-based generator keyed by `seed`, so the same seed gives the
// same matrix on every run. The padding columns [cols, ld) get
// poison_bits(dtype): a kernel that reads past a row brings a NaN in.
void fill_matrix(DType dtype, uint16_t* base, int64_t rows, int64_t cols, int64_t ld, Fill fill, uint64_t seed);

// Sets `count` elements to `bits`.
void fill_bits(uint16_t* base, size_t count, uint16_t bits);

struct ValueCounts {
  int64_t nonzero = 0;
  int64_t nan = 0;  // NaN or infinity
};
// Counts over the rows x cols matrix (padding excluded).
ValueCounts count_values(DType dtype, const uint16_t* base, int64_t rows, int64_t cols, int64_t ld);

std::vector<uint16_t> download(const uint16_t* device, size_t count);
void upload(uint16_t* device, const std::vector<uint16_t>& host);
void copy_device(uint16_t* dst, const uint16_t* src, size_t count);

// Host conversions (round to nearest even), independent of cuda_fp16.h.
float to_float(DType dtype, uint16_t bits);
uint16_t from_float(DType dtype, float value);
bool is_nan_or_inf(DType dtype, uint16_t bits);

}  // namespace tcgemm::test
