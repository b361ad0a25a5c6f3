// TMA map parameters for every layout, and the alignment rules that send a
// call to the cuBLAS fallback.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/host/tensor_map.hpp"
#include "common/host/validate.hpp"
#include "sm90/sm90_config.hpp"

namespace tcgemm::detail {
namespace {

// Distinct sizes (M not a multiple of 8) and leading dimensions larger than
// the rows, so a swapped dimension or a stride from the wrong field shows.
constexpr int64_t kM = 300, kN = 200, kK = 136;
constexpr int64_t kPadA = 16, kPadB = 24, kPadC = 8;

// Leading dimension: the row rounded up to 8 elements (16 bytes), plus padding.
constexpr int64_t ld_for(int64_t cols, int64_t pad) { return (cols + 7) / 8 * 8 + pad; }

const void* const kAligned = reinterpret_cast<const void*>(uintptr_t{0x7f0000001000});

GemmArgs args_for(Op op_a, Op op_b) {
  GemmArgs g;
  g.op_a = op_a;
  g.op_b = op_b;
  g.m = kM;
  g.n = kN;
  g.k = kK;
  g.lda = ld_for(op_a == Op::N ? kK : kM, kPadA);
  g.ldb = ld_for(op_b == Op::N ? kN : kK, kPadB);
  g.ldc = ld_for(kN, kPadC);
  g.a = kAligned;
  g.b = kAligned;
  g.c = const_cast<void*>(kAligned);
  return g;
}

std::string layout(Op a, Op b) { return std::string(to_string(a)) + to_string(b); }

void expect_map(const Tma2D& t, uint64_t cols, uint64_t rows, uint64_t ld, uint32_t box_cols, uint32_t box_rows,
                uint32_t swizzle = 128) {
  EXPECT_EQ(t.dims[0], cols) << "inner (contiguous) dimension";
  EXPECT_EQ(t.dims[1], rows) << "outer dimension";
  EXPECT_EQ(t.row_stride, ld * 2) << "row stride in bytes of 16-bit elements";
  EXPECT_EQ(t.box[0], box_cols) << "box columns";
  EXPECT_EQ(t.box[1], box_rows) << "box rows";
  EXPECT_EQ(t.swizzle, swizzle) << "swizzle bytes: one box row";
}

TEST(TensorMap, OperandAForBothOps) {
  for (Op ob : {Op::N, Op::T}) {
    GemmArgs g = args_for(Op::N, ob);
    SCOPED_TRACE("layout=" + layout(Op::N, ob));
    // M x K, K contiguous: one 64-wide (128-byte) box of BLOCK_M rows.
    expect_map(tma_operand_a(g, 128, 64), kK, kM, ld_for(kK, kPadA), 64, 128);
    g = args_for(Op::T, ob);
    SCOPED_TRACE("layout=" + layout(Op::T, ob));
    // K x M, M contiguous: 64-wide panels of M, BLOCK_K rows of K.
    expect_map(tma_operand_a(g, 128, 64), kM, kK, ld_for(kM, kPadA), 64, 64);
  }
}

TEST(TensorMap, OperandBForBothOps) {
  for (Op oa : {Op::N, Op::T})
    for (int block_n : {128, 256}) {
      SCOPED_TRACE("block_n=" + std::to_string(block_n));
      GemmArgs g = args_for(oa, Op::N);
      SCOPED_TRACE("layout=" + layout(oa, Op::N));
      // K x N, N contiguous: 64-wide panels of N, BLOCK_K rows.
      expect_map(tma_operand_b(g, block_n, 64), kN, kK, ld_for(kN, kPadB), 64, 64);
      g = args_for(oa, Op::T);
      SCOPED_TRACE("layout=" + layout(oa, Op::T));
      // N x K, K contiguous: one box of BLOCK_N rows.
      expect_map(tma_operand_b(g, block_n, 64), kK, kN, ld_for(kK, kPadB), 64, static_cast<uint32_t>(block_n));
      // In a 2-CTA cluster each CTA loads half of the rows and multicasts them.
      expect_map(tma_operand_b(g, block_n, 64, 2), kK, kN, ld_for(kK, kPadB), 64, static_cast<uint32_t>(block_n / 2));
      // N-contiguous panels are split between the CTAs whole: the box is unchanged.
      expect_map(tma_operand_b(args_for(oa, Op::N), block_n, 64, 2), kN, kK, ld_for(kN, kPadB), 64, 64);
    }
}

// An MN-major B narrower than whole 64-wide panels: 32-wide panels with a
// 64-byte swizzle, 16-wide with 32-byte, one box row each; K-major B keeps
// one 128-byte box of BLOCK_N rows.
TEST(TensorMap, NarrowPanelsOfAnMNMajorB) {
  struct Want {
    int block_n;
    uint32_t panel;
  };
  for (const Want w : {Want{16, 16}, Want{32, 32}, Want{48, 16}, Want{96, 32}, Want{64, 64}, Want{192, 64}}) {
    SCOPED_TRACE("block_n=" + std::to_string(w.block_n));
    const GemmArgs g = args_for(Op::N, Op::N);
    const Tma2D b = tma_operand_b(g, w.block_n, 64);
    expect_map(b, kN, kK, ld_for(kN, kPadB), w.panel, 64, 2 * w.panel);
    EXPECT_EQ(tma_unsupported_reason(g.b, b), "");
    EXPECT_EQ(w.block_n % w.panel, 0) << "whole panels";
    expect_map(tma_operand_b(args_for(Op::N, Op::T), w.block_n, 64), kK, kN, ld_for(kK, kPadB), 64,
               static_cast<uint32_t>(w.block_n));
  }
}

// The swapped kernel's view of a call (sm90 swap_ab): A and B trade places
// with their ops flipped, so nn.Linear's x @ W^T (NT) stays NT with W as A;
// its A map then covers W (N x K) and its B map x (M x K). C is untouched.
TEST(TensorMap, SwappedOperands) {
  GemmArgs g = args_for(Op::N, Op::T);
  const void* const other = reinterpret_cast<const void*>(uintptr_t{0x7f0000002000});
  g.b = other;
  g.batch = 3;
  g.stride_a = 1000;
  g.stride_b = 0;
  g.stride_c = 5000;
  const GemmArgs s = swapped_operands(g);
  EXPECT_EQ(s.op_a, Op::N);
  EXPECT_EQ(s.op_b, Op::T);
  EXPECT_EQ(s.m, kN);
  EXPECT_EQ(s.n, kM);
  EXPECT_EQ(s.k, kK);
  EXPECT_EQ(s.a, other);
  EXPECT_EQ(s.lda, g.ldb);
  EXPECT_EQ(s.b, kAligned);
  EXPECT_EQ(s.ldb, g.lda);
  EXPECT_EQ(s.stride_a, 0);
  EXPECT_EQ(s.stride_b, 1000);
  EXPECT_EQ(s.c, g.c);
  EXPECT_EQ(s.ldc, g.ldc);
  EXPECT_EQ(s.stride_c, 5000);
  expect_map(tma_operand_a(s, 128, 64), kK, kN, g.ldb, 64, 128);
  expect_map(tma_operand_b(s, 144, 64), kK, kM, g.lda, 64, 144);
  // Every layout maps to the one its transpose is stored in: TN -> TN, NN -> TT, TT -> NN.
  EXPECT_EQ(swapped_operands(args_for(Op::T, Op::N)).op_a, Op::T);
  EXPECT_EQ(swapped_operands(args_for(Op::T, Op::N)).op_b, Op::N);
  EXPECT_EQ(swapped_operands(args_for(Op::N, Op::N)).op_a, Op::T);
  EXPECT_EQ(swapped_operands(args_for(Op::N, Op::N)).op_b, Op::T);
  // Twice is the call itself.
  const GemmArgs back = swapped_operands(s);
  EXPECT_EQ(back.m, g.m);
  EXPECT_EQ(back.a, g.a);
  EXPECT_EQ(back.op_a, g.op_a);
  EXPECT_EQ(back.stride_a, g.stride_a);
}

// The boxes of the tiles whose rows run past an operand's end: A's last
// block-row (rows of M) and, for the swapped kernel, B's last block of N
// (its tokens), cut to what is there rounded up to 8; K-major operands only.
TEST(TensorMap, TailBoxesCutToTheRowsThereAre) {
  GemmArgs g = args_for(Op::N, Op::T);
  g.m = 520;
  g.n = 300;
  EXPECT_EQ(a_tail_box_rows(g, 128, 128), 8) << "520 = 4 x 128 + 8";
  EXPECT_EQ(b_tail_box_rows(g, 152, 152), 152) << "300 = 152 + 148: 148 rounded up to 8";
  g.n = 290;
  EXPECT_EQ(b_tail_box_rows(g, 152, 152), 144) << "290 = 152 + 138";
  // The swapped kernel's B is the call's A: 520 tokens in tiles of 144 leave 88 in the last.
  GemmArgs call = args_for(Op::N, Op::T);
  call.m = 520;
  call.n = 4096;
  const GemmArgs s = swapped_operands(call);
  EXPECT_EQ(b_tail_box_rows(s, 144, 144), 88);
  EXPECT_EQ(b_tail_box_rows(s, 176, 176), 168) << "3 x 176 = 528: 168 of the last tile's";
  EXPECT_EQ(b_tail_box_rows(s, 104, 104), 104) << "520 = 5 x 104: nothing to cut";
  call.m = 3;
  EXPECT_EQ(b_tail_box_rows(swapped_operands(call), 144, 144), 8) << "one token tile: 3 rows, 8 in the box";
  // MN-major: not cut (its box is a panel of K lines).
  EXPECT_EQ(b_tail_box_rows(args_for(Op::N, Op::N), 144, 144), 144);
  EXPECT_EQ(a_tail_box_rows(args_for(Op::T, Op::T), 128, 128), 128);
}

// The tail map's bytes of one k-block are set with it, for the launchers
// to pass to the kernel (what each k-block's copy through it brings): here
// a box that is not cut, so the map is a copy and no driver call is made.
TEST(TensorMap, TailBytesSetWithTheTailMap) {
  const GemmArgs g = args_for(Op::N, Op::T);
  GemmTensorMaps maps;
  EXPECT_EQ(encode_a_tail(g, 128, 128, 64, &maps), "");
  EXPECT_EQ(maps.tail_bytes, 128u * 64u * 2u);
  EXPECT_EQ(encode_b_tail(g, 152, 152, 64, &maps), "");
  EXPECT_EQ(maps.tail_bytes, 152u * 64u * 2u);
}

TEST(TensorMap, OutputC) {
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T}) {
      SCOPED_TRACE("layout=" + layout(oa, ob));
      expect_map(tma_output_c(args_for(oa, ob), 64), kN, kM, ld_for(kN, kPadC), 64, 64);
    }
}

// sm90's pair map: C in 64-column blocks, two blocks by 64 rows a box, a
// batch as the fourth dimension.
TEST(TensorMap, OutputCPairs) {
  GemmArgs g = args_for(Op::N, Op::T);
  g.n = 4096;
  g.ldc = 4096 + 64;
  const TmaPairs t = tma_output_c_pairs(g);
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.dims[0], 64u);
  EXPECT_EQ(t.dims[1], 64u);  // 4096 / 64 blocks
  EXPECT_EQ(t.dims[2], static_cast<uint64_t>(g.m));
  EXPECT_EQ(t.strides[0], 128u);
  EXPECT_EQ(t.strides[1], (4096u + 64u) * 2u);
  EXPECT_EQ(t.box[0], 64u);
  EXPECT_EQ(t.box[1], 2u);
  EXPECT_EQ(t.box[2], 64u);
  g.batch = 7;
  g.stride_c = int64_t{g.ldc} * g.m + 8;
  const TmaPairs b = tma_output_c_pairs(g);
  EXPECT_EQ(b.rank, 4);
  EXPECT_EQ(b.dims[3], 7u);
  EXPECT_EQ(b.strides[2], static_cast<uint64_t>(g.stride_c) * 2u);
  EXPECT_EQ(b.box[3], 1u);
}

// Every map the shipped configurations build for aligned arguments is one TMA
// accepts: boxes within 256 rows and a 128-byte swizzle row.
TEST(TensorMap, ShippedConfigsProduceValidMaps) {
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T})
      for (int block_n : {128, 256}) {
        const GemmArgs g = args_for(oa, ob);
        SCOPED_TRACE("layout=" + layout(oa, ob) + " block_n=" + std::to_string(block_n));
        EXPECT_EQ(tma_unsupported_reason(g.a, tma_operand_a(g, sm90::kBlockM, sm90::kBlockK)), "");
        EXPECT_EQ(tma_unsupported_reason(g.b, tma_operand_b(g, block_n, sm90::kBlockK)), "");
        EXPECT_EQ(tma_unsupported_reason(g.c, tma_output_c(g, sm90::kEpiPanel)), "");
      }
}

TEST(TensorMapUnsupported, MisalignedBaseByOneElement) {
  const GemmArgs g = args_for(Op::N, Op::N);
  const auto* base = static_cast<const char*>(kAligned);
  const Tma2D map = tma_operand_a(g, 128, 64);
  for (int offset : {2, 8, 14}) {
    const std::string why = tma_unsupported_reason(base + offset, map);
    EXPECT_NE(why.find("16-byte aligned"), std::string::npos) << "offset " << offset << ": '" << why << "'";
  }
  EXPECT_EQ(tma_unsupported_reason(base + 16, map), "");
  EXPECT_EQ(tma_unsupported_reason(base + 1024, map), "");
}

TEST(TensorMapUnsupported, LeadingDimensionNotAMultipleOf8) {
  for (int64_t extra : {1, 2, 4, 7}) {
    GemmArgs g = args_for(Op::T, Op::N);
    g.lda = kM + extra;  // kM = 300 is not a multiple of 8 either, but 300 + 4 = 304 is
    const Tma2D map = tma_operand_a(g, 128, 64);
    const std::string why = tma_unsupported_reason(g.a, map);
    if (g.lda % 8 == 0) {
      EXPECT_EQ(why, "") << "lda=" << g.lda;
    } else {
      EXPECT_NE(why.find("multiple of 8"), std::string::npos) << "lda=" << g.lda << ": '" << why << "'";
      EXPECT_NE(why.find(std::to_string(g.lda * 2)), std::string::npos) << "names the stride in bytes: " << why;
    }
  }
}

TEST(TensorMapUnsupported, StrideAndDimensionLimits) {
  Tma2D t{};
  t.dims[0] = 64;
  t.dims[1] = 64;
  t.row_stride = uint64_t{1} << 40;
  t.box[0] = 64;
  t.box[1] = 64;
  EXPECT_NE(tma_unsupported_reason(kAligned, t).find("2^40"), std::string::npos);
  t.row_stride = 128;
  EXPECT_EQ(tma_unsupported_reason(kAligned, t), "");
  t.dims[1] = 0;  // an empty matrix cannot be described
  EXPECT_NE(tma_unsupported_reason(kAligned, t).find("outside"), std::string::npos);
  t.dims[1] = 64;
  t.box[0] = 128;  // 256 bytes: wider than the 128-byte swizzle
  EXPECT_NE(tma_unsupported_reason(kAligned, t).find("swizzle"), std::string::npos);
  t.box[0] = 32;  // 64 bytes: wider than a 32-byte swizzle, as wide as a 64-byte one
  t.swizzle = 32;
  EXPECT_NE(tma_unsupported_reason(kAligned, t).find("32-byte swizzle"), std::string::npos);
  t.swizzle = 64;
  EXPECT_EQ(tma_unsupported_reason(kAligned, t), "");
  t.swizzle = 16;  // not a swizzle TMA has here
  EXPECT_NE(tma_unsupported_reason(kAligned, t).find("swizzle"), std::string::npos);
  t.swizzle = 128;
  t.box[0] = 64;
  t.box[1] = 512;  // more than 256 rows per box
  EXPECT_FALSE(tma_unsupported_reason(kAligned, t).empty());
}

}  // namespace
}  // namespace tcgemm::detail
