// The torch integration's stride -> (op, ld) mapping (python/csrc/torch_layout.hpp),
// checked exhaustively on small shapes and strides against its definition:
// a layout is right when it addresses exactly the elements the strides do,
// passes the library's validation, and a copy (or, for the output, a refusal)
// happens only when no op and leading dimension could address the tensor.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/host/validate.hpp"
#include "torch_layout.hpp"

namespace tcgemm::torch_glue {
namespace {

constexpr int64_t kSizes[] = {0, 1, 2, 3, 8, 9};
constexpr int64_t kStrides[] = {0, 1, 2, 3, 8, 9, 10, 16, 24};
constexpr int64_t kMaxLd = 40;

// Whether (op, ld) addresses element (i, j) of a rows x cols tensor with
// strides (s0, s1) at the same offset, for every element.
bool addresses_same(int64_t rows, int64_t cols, int64_t s0, int64_t s1, Op op, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t want = i * s0 + j * s1;
      const int64_t got = op == Op::N ? i * ld + j : j * ld + i;
      if (want != got) return false;
    }
  return true;
}

// The library's own verdict on a leading dimension, with the rows x cols
// matrix as operand A (M x K; stored K x M when op is T).
std::string validate_as_a(int64_t rows, int64_t cols, Op op, int64_t ld) {
  GemmArgs g;
  g.op_a = op;
  g.m = rows;
  g.k = cols;
  g.n = 8;
  g.a = reinterpret_cast<const void*>(uintptr_t{0x10000});
  g.lda = ld;
  g.b = reinterpret_cast<const void*>(uintptr_t{0x20000});
  g.ldb = 8;
  g.c = reinterpret_cast<void*>(uintptr_t{0x30000});
  g.ldc = 8;
  return detail::check_args(g);
}

bool representable(int64_t rows, int64_t cols, int64_t s0, int64_t s1, bool n_only) {
  for (Op op : {Op::N, Op::T}) {
    if (n_only && op == Op::T) continue;
    const int64_t stored_cols = op == Op::N ? cols : rows;
    for (int64_t ld = stored_cols > 1 ? stored_cols : 1; ld <= kMaxLd; ++ld)
      if (addresses_same(rows, cols, s0, s1, op, ld)) return true;
  }
  return false;
}

std::string name(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  return std::string("[") + std::to_string(rows) + ", " + std::to_string(cols) + "] strides [" +
         std::to_string(s0) + ", " + std::to_string(s1) + "]";
}

TEST(TorchLayout, OperandsAreAddressedExactlyOrCopied) {
  for (int64_t rows : kSizes)
    for (int64_t cols : kSizes)
      for (int64_t s0 : kStrides)
        for (int64_t s1 : kStrides) {
          const OperandLayout l = operand_layout(rows, cols, s0, s1);
          const std::string what = name(rows, cols, s0, s1);
          if (l.copy) {
            EXPECT_FALSE(representable(rows, cols, s0, s1, false)) << what << " is copied but needs no copy";
            // The copy is contiguous: then it must map without another copy.
            const OperandLayout c = operand_layout(rows, cols, cols > 0 ? cols : 1, 1);
            EXPECT_FALSE(c.copy) << what;
            EXPECT_TRUE(addresses_same(rows, cols, cols, 1, c.op, c.ld)) << what << " (its contiguous copy)";
            continue;
          }
          EXPECT_TRUE(addresses_same(rows, cols, s0, s1, l.op, l.ld))
              << what << " -> op " << to_string(l.op) << " ld " << l.ld;
          EXPECT_EQ(validate_as_a(rows, cols, l.op, l.ld), "") << what;
        }
}

TEST(TorchLayout, TheUsualViewsNeedNoCopy) {
  // x (M x K row-major), x.t() of a row-major K x M, a column slice x[:, :16] of a wider matrix.
  EXPECT_EQ(operand_layout(128, 64, 64, 1).op, Op::N);
  EXPECT_EQ(operand_layout(128, 64, 64, 1).ld, 64);
  EXPECT_EQ(operand_layout(128, 64, 1, 128).op, Op::T);
  EXPECT_EQ(operand_layout(128, 64, 1, 128).ld, 128);
  EXPECT_EQ(operand_layout(128, 16, 64, 1).ld, 64);
  EXPECT_FALSE(operand_layout(128, 16, 64, 1).copy);
  // Every other column: copied.
  EXPECT_TRUE(operand_layout(128, 32, 64, 2).copy);
}

TEST(TorchLayout, UnusedLeadingDimensionsStayTmaCompatible) {
  // A single row or column: the ld addresses nothing, so it is the row length
  // rounded up to 8 (a multiple of 16 bytes) whatever torch's stride says.
  EXPECT_EQ(operand_layout(1, 100, 100, 1).ld, 104);
  EXPECT_EQ(operand_layout(1, 100, 1, 1).ld, 104);
  EXPECT_EQ(operand_layout(100, 1, 1, 1).op, Op::T);
  EXPECT_EQ(operand_layout(100, 1, 1, 100).ld, 104);
  EXPECT_EQ(output_ld(1, 100, 7, 1), 104);
}

// An M-grouped call has no cuBLAS path: what its tensor maps cannot address
// is copied. (Once a column slice a[:, :64] of a [M, 68] buffer was read in
// place, lda = 68, and the library refused the call.)
TEST(TorchLayout, TheMGroupedCallReadsInPlaceOnlyWhatItsMapsAddress) {
  constexpr uint64_t kAligned = 0x10000;
  // a [M, 64]: contiguous, or a slice of a [M, 72] buffer: in place.
  EXPECT_TRUE(grouped_in_place(operand_layout(100, 64, 64, 1), true, kAligned));
  EXPECT_TRUE(grouped_in_place(operand_layout(100, 64, 72, 1), true, kAligned));
  // ... of a [M, 68] buffer (rows 136 bytes apart), or from an odd start: copied.
  EXPECT_FALSE(grouped_in_place(operand_layout(100, 64, 68, 1), true, kAligned));
  EXPECT_FALSE(grouped_in_place(operand_layout(100, 64, 64, 1), true, kAligned + 8));
  // a stored K x M (a.t() of a row-major tensor): not K-major, copied; b may be either.
  EXPECT_FALSE(grouped_in_place(operand_layout(100, 64, 1, 100), true, kAligned));
  EXPECT_TRUE(grouped_in_place(operand_layout(64, 96, 1, 64), false, kAligned, 64 * 96));
  // b [G, K, N]: a group stride of whole 16-byte units, its rows too; one group's stride is not used.
  EXPECT_TRUE(grouped_in_place(operand_layout(64, 96, 96, 1), false, kAligned, 64 * 96));
  EXPECT_FALSE(grouped_in_place(operand_layout(64, 96, 96, 1), false, kAligned, 64 * 96 + 4));
  EXPECT_FALSE(grouped_in_place(operand_layout(64, 96, 100, 1), false, kAligned, 64 * 100));
  EXPECT_TRUE(grouped_in_place(operand_layout(64, 96, 96, 1), false, kAligned, 0));
  // Views that need a copy anyway.
  EXPECT_FALSE(grouped_in_place(operand_layout(64, 96, 192, 2), false, kAligned, 0));
}

TEST(TorchLayout, OutputsAreRowMajorOrRefused) {
  for (int64_t rows : kSizes)
    for (int64_t cols : kSizes)
      for (int64_t s0 : kStrides)
        for (int64_t s1 : kStrides) {
          const int64_t ld = output_ld(rows, cols, s0, s1);
          const std::string what = name(rows, cols, s0, s1);
          if (ld == 0) {
            EXPECT_FALSE(representable(rows, cols, s0, s1, true)) << what << " is refused but is row-major";
            continue;
          }
          EXPECT_TRUE(addresses_same(rows, cols, s0, s1, Op::N, ld)) << what << " -> ldc " << ld;
          EXPECT_GE(ld, cols > 1 ? cols : 1) << what;
        }
  EXPECT_EQ(output_ld(64, 32, 1, 64), 0);  // out.t() of a row-major matrix
}

}  // namespace
}  // namespace tcgemm::torch_glue
