// Seeded random fills, constant fills (NaN poison) and value counts on the
// GPU, for fp16/bf16 data held as raw 16-bit patterns.
//
// Matrices are row-major: `rows` rows of `cols` elements, `ld` elements apart.
// A plain array of n elements is the 1 x n matrix with ld = n; the overloads
// that take a count say that for the caller.
//
// Functions that return results wait for `stream`; the fills only enqueue
// work (launch errors throw at once, faults at the caller's next
// synchronization). Failures throw CudaError.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::support {

// What each element is drawn from, before rounding to the dtype.
struct Distribution {
  enum class Kind { uniform, integers };
  Kind kind = Kind::uniform;
  float lo = -1.0f, hi = 1.0f;
};
// Uniform in [lo, hi).
constexpr Distribution uniform(float lo, float hi) { return {Distribution::Kind::uniform, lo, hi}; }
// Whole numbers in [lo, hi], equally likely. Small ones keep every product
// and partial sum of a GEMM exact in fp32.
constexpr Distribution integers(int lo, int hi) {
  return {Distribution::Kind::integers, static_cast<float>(lo), static_cast<float>(hi)};
}

// Fills the matrix from a counter-based generator keyed by `seed`. Element
// (r, c) depends only on `seed` and r * cols + c, not on ld or the base
// address: the same seed gives the same matrix on every run and GPU and in
// every layout, so a failure can be reproduced from its seed. The padding
// columns [cols, ld) get `pad_bits` (poison: a kernel that reads past a row
// brings a NaN in).
void fill_random(DType dtype, uint16_t* data, int64_t rows, int64_t cols, int64_t ld, Distribution dist,
                 uint64_t seed, uint16_t pad_bits, cudaStream_t stream = nullptr);
inline void fill_random(DType dtype, uint16_t* data, int64_t count, Distribution dist, uint64_t seed,
                        cudaStream_t stream = nullptr) {
  fill_random(dtype, data, 1, count, count, dist, seed, 0, stream);
}

// Sets `count` elements to `bits` (a memset where both bytes are equal).
void fill_bits(uint16_t* data, size_t count, uint16_t bits, cudaStream_t stream = nullptr);

// What a matrix holds (padding excluded). Tests must never run on zeros or
// non-finite data: a kernel that reads nothing, or a generator that writes
// zeros, would make every backend agree.
struct ValueStats {
  int64_t count = 0;
  int64_t nonzero = 0;
  int64_t nonfinite = 0;  // NaN or infinity

  // Finite, and at least half non-zero: what a random input must be.
  bool usable_input() const { return nonfinite == 0 && nonzero * 2 >= count; }
};
ValueStats value_stats(DType dtype, const uint16_t* data, int64_t rows, int64_t cols, int64_t ld,
                       cudaStream_t stream = nullptr);
inline ValueStats value_stats(DType dtype, const uint16_t* data, int64_t count, cudaStream_t stream = nullptr) {
  return value_stats(dtype, data, 1, count, count, stream);
}

}  // namespace tcgemm::support
