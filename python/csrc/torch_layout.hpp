// How a strided 2-D tensor is handed to tcgemm: an op (N or T) and a leading
// dimension, read off its strides, without copying where tcgemm can describe
// it. Pure arithmetic on sizes and strides (no torch), unit-tested on the host.
//
// tcgemm stores matrices row-major. A rows x cols tensor x is
//   op N, ld = x.stride(0)   when its rows are contiguous (x.stride(1) == 1),
//   op T, ld = x.stride(1)   when its columns are (x.stride(0) == 1): it is
//                            then the row-major cols x rows matrix x.t(),
//                            e.g. x = w.t() for a row-major weight w.
// Size-1 dimensions make strides ambiguous (torch may give them any stride),
// so a single row or column is placed by the stride that matters, and where
// the leading dimension is never used to address anything it is set to the
// row length rounded up to 8, which keeps the operand TMA-compatible.
// Anything else (a[:, ::2], expanded or overlapping views) is not a matrix
// tcgemm can address: operands are then copied to a contiguous tensor, and an
// output is refused (writing to a copy would not write to the caller's tensor).
#pragma once

#include <cstdint>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::torch_glue {

struct OperandLayout {
  Op op = Op::N;
  int64_t ld = 1;
  bool copy = false;  // make a contiguous copy first; then op N, ld = max(cols, 1)
};

constexpr int64_t round_up_8(int64_t x) { return (x + 7) / 8 * 8; }
constexpr int64_t at_least_1(int64_t x) { return x > 1 ? x : 1; }

// An operand of `rows` x `cols` elements with strides (s0, s1).
constexpr OperandLayout operand_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  // Nothing of an empty operand is read; the ld only has to be well formed.
  if (rows == 0 || cols == 0) return {Op::N, at_least_1(cols), false};
  if (rows == 1 && cols == 1) return {Op::N, 8, false};
  if (rows == 1) {
    // One row: contiguous -> N (ld unused); strided -> the T view of a
    // cols x 1 column whose rows are s1 apart.
    if (s1 == 1) return {Op::N, round_up_8(cols), false};
    if (s1 >= 1) return {Op::T, s1, false};
    return {Op::N, cols, true};
  }
  if (cols == 1) {
    // One column: contiguous -> T (the 1 x rows matrix, ld unused); strided -> N.
    if (s0 == 1) return {Op::T, round_up_8(rows), false};
    if (s0 >= 1) return {Op::N, s0, false};
    return {Op::N, 1, true};
  }
  if (s1 == 1 && s0 >= cols) return {Op::N, s0, false};
  if (s0 == 1 && s1 >= rows) return {Op::T, s1, false};
  return {Op::N, cols, true};
}

// Whether an M-grouped call reads an operand as laid out (else it is copied
// to a contiguous tensor first: that call has no cuBLAS path to take what the
// kernels' tensor maps cannot address): a layout needing no copy, op N where
// `k_major` (a: each group's rows start at any row), a 16-byte aligned
// `address`, and the leading dimension and `group_stride` (b's, 0 for one
// matrix) in whole 16-byte units of 2-byte elements.
constexpr bool grouped_in_place(const OperandLayout& l, bool k_major, uint64_t address, int64_t group_stride = 0) {
  return !l.copy && (!k_major || l.op == Op::N) && address % 16 == 0 && l.ld % 8 == 0 && group_stride % 8 == 0;
}

// The output must be row-major: rows contiguous and not overlapping. Returns
// its leading dimension, or 0 when it is not row-major.
constexpr int64_t output_ld(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (rows == 0 || cols == 0) return at_least_1(cols);
  if (rows == 1) return (s1 == 1 || cols == 1) ? round_up_8(cols) : 0;
  if (cols == 1) return s0 >= 1 ? s0 : 0;
  return (s1 == 1 && s0 >= cols) ? s0 : 0;
}

}  // namespace tcgemm::torch_glue
