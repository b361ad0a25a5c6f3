// check_args / describe: every rejection names the problem and ends with the
// whole case, and the documented degenerate cases are accepted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/host/validate.hpp"

namespace tcgemm::detail {
namespace {

// Pointers that are never dereferenced: validation only compares them to null.
const void* const kFakeA = reinterpret_cast<const void*>(uintptr_t{0x10000});
const void* const kFakeB = reinterpret_cast<const void*>(uintptr_t{0x20000});
void* const kFakeC = reinterpret_cast<void*>(uintptr_t{0x30000});

// M, N and K all differ, so a message quoting a row length identifies which
// dimension it was derived from.
constexpr int64_t kM = 96, kN = 80, kK = 48;

int64_t min_lda(Op op_a) { return op_a == Op::N ? kK : kM; }
int64_t min_ldb(Op op_b) { return op_b == Op::N ? kN : kK; }

GemmArgs valid_args(Op op_a = Op::N, Op op_b = Op::N) {
  GemmArgs g;
  g.dtype = DType::f16;
  g.op_a = op_a;
  g.op_b = op_b;
  g.m = kM;
  g.n = kN;
  g.k = kK;
  g.a = kFakeA;
  g.lda = min_lda(op_a);
  g.b = kFakeB;
  g.ldb = min_ldb(op_b);
  g.c = kFakeC;
  g.ldc = kN;
  return g;
}

// The rejection contains every fragment and ends with " (describe(args))".
void expect_rejected(const GemmArgs& g, std::initializer_list<std::string> fragments) {
  const std::string why = check_args(g);
  ASSERT_FALSE(why.empty()) << "accepted but should be rejected: " << describe(g);
  for (const auto& f : fragments) EXPECT_NE(why.find(f), std::string::npos) << "'" << f << "' missing in: " << why;
  const std::string tail = " (" + describe(g) + ")";
  ASSERT_GE(why.size(), tail.size()) << why;
  EXPECT_EQ(why.substr(why.size() - tail.size()), tail) << "describe(args) is not appended: " << why;
}

void expect_accepted(const GemmArgs& g) { EXPECT_EQ(check_args(g), "") << describe(g); }

const Op kOps[] = {Op::N, Op::T};

TEST(Describe, DocumentedExample) {
  GemmArgs g;
  g.dtype = DType::f16;
  g.op_a = Op::N;
  g.op_b = Op::T;
  g.m = 128;
  g.n = 256;
  g.k = 64;
  g.lda = 64;
  g.ldb = 64;
  g.ldc = 256;
  EXPECT_EQ(describe(g), "m=128 n=256 k=64 dtype=f16 layout=NT lda=64 ldb=64 ldc=256");
  g.dtype = DType::bf16;
  g.op_a = Op::T;
  g.op_b = Op::N;
  EXPECT_EQ(describe(g), "m=128 n=256 k=64 dtype=bf16 layout=TN lda=64 ldb=64 ldc=256");
}

TEST(Describe, OutOfRangeEnumsArePrintedAsNumbers) {
  GemmArgs g = valid_args();
  g.dtype = static_cast<DType>(7);
  g.op_a = static_cast<Op>(5);
  const std::string d = describe(g);
  EXPECT_NE(d.find("dtype=<7>"), std::string::npos) << d;
  EXPECT_NE(d.find("layout=<5>N"), std::string::npos) << d;
}

TEST(StoredShape, FollowsTheOps) {
  GemmArgs g = valid_args(Op::N, Op::N);
  EXPECT_EQ(stored_shape_a(g).rows, kM);
  EXPECT_EQ(stored_shape_a(g).cols, kK);
  EXPECT_EQ(stored_shape_b(g).rows, kK);
  EXPECT_EQ(stored_shape_b(g).cols, kN);
  g = valid_args(Op::T, Op::T);
  EXPECT_EQ(stored_shape_a(g).rows, kK);
  EXPECT_EQ(stored_shape_a(g).cols, kM);
  EXPECT_EQ(stored_shape_b(g).rows, kN);
  EXPECT_EQ(stored_shape_b(g).cols, kK);
}

TEST(CheckArgs, AcceptsValidArgumentsForEveryLayoutAndDtype) {
  for (DType dt : {DType::f16, DType::bf16})
    for (Op oa : kOps)
      for (Op ob : kOps) {
        GemmArgs g = valid_args(oa, ob);
        g.dtype = dt;
        expect_accepted(g);
        // Larger leading dimensions are fine too.
        g.lda += 8;
        g.ldb += 24;
        g.ldc += 1;
        expect_accepted(g);
      }
}

TEST(CheckArgs, RejectsUnknownDtype) {
  for (int dt : {2, -1, 7}) {
    GemmArgs g = valid_args();
    g.dtype = static_cast<DType>(dt);
    expect_rejected(g, {"unknown dtype " + std::to_string(dt), "dtype=<" + std::to_string(dt) + ">"});
  }
}

TEST(CheckArgs, RejectsUnknownOps) {
  GemmArgs g = valid_args();
  g.op_a = static_cast<Op>(2);
  expect_rejected(g, {"unknown op_a 2"});
  g = valid_args();
  g.op_b = static_cast<Op>(-3);
  expect_rejected(g, {"unknown op_b -3"});
}

TEST(CheckArgs, RejectsNegativeSizes) {
  for (int which = 0; which < 3; ++which) {
    GemmArgs g = valid_args();
    (which == 0 ? g.m : which == 1 ? g.n : g.k) = -1;
    const std::string field = (which == 0 ? "m=-1" : which == 1 ? "n=-1" : "k=-1");
    expect_rejected(g, {"negative", field});
  }
}

TEST(CheckArgs, RejectsSizesBeyond32BitCoordinates) {
  GemmArgs g = valid_args();
  g.k = int64_t{1} << 31;
  g.lda = g.k;  // keep the leading dimension valid: the size is the problem
  expect_rejected(g, {"2^31-1"});
}

// For each op, the leading dimension one below the row length of the stored
// operand is rejected with its name, value, the needed row length and the
// stored shape; exactly the row length is accepted.
TEST(CheckArgs, RejectsLdaTooSmallForEachOp) {
  for (Op oa : kOps) {
    GemmArgs g = valid_args(oa, Op::N);
    const int64_t need = min_lda(oa);
    g.lda = need - 1;
    expect_rejected(g, {"lda=" + std::to_string(need - 1), "row length " + std::to_string(need),
                        oa == Op::N ? "op_a=N" : "op_a=T"});
    g.lda = need;
    expect_accepted(g);
  }
}

TEST(CheckArgs, RejectsLdbTooSmallForEachOp) {
  for (Op ob : kOps) {
    GemmArgs g = valid_args(Op::N, ob);
    const int64_t need = min_ldb(ob);
    g.ldb = need - 1;
    expect_rejected(g, {"ldb=" + std::to_string(need - 1), "row length " + std::to_string(need),
                        ob == Op::N ? "op_b=N" : "op_b=T"});
    g.ldb = need;
    expect_accepted(g);
  }
}

TEST(CheckArgs, RejectsLdcTooSmall) {
  for (Op oa : kOps)
    for (Op ob : kOps) {
      GemmArgs g = valid_args(oa, ob);
      g.ldc = kN - 1;
      expect_rejected(g, {"ldc=" + std::to_string(kN - 1), "row length " + std::to_string(kN), "of C"});
    }
}

TEST(CheckArgs, RejectsNonPositiveLeadingDimensions) {
  // An empty row still needs ld >= 1 (like BLAS's max(1, ...)).
  GemmArgs g = valid_args();
  g.k = 0;
  g.lda = 0;
  expect_rejected(g, {"lda=0", "row length 1"});
  g.lda = 1;
  expect_accepted(g);
  g = valid_args();
  g.ldb = -8;
  expect_rejected(g, {"ldb=-8"});
}

TEST(CheckArgs, RejectsNullPointers) {
  GemmArgs g = valid_args();
  g.c = nullptr;
  expect_rejected(g, {"C is a null pointer"});
  g = valid_args();
  g.a = nullptr;
  expect_rejected(g, {"A is a null pointer"});
  g = valid_args();
  g.b = nullptr;
  expect_rejected(g, {"B is a null pointer"});
}

TEST(CheckArgs, EmptyOutputAcceptsNullPointers) {
  // M == 0, N == 0 or an empty batch: nothing is read or written, so every pointer may be null.
  for (int which = 0; which < 3; ++which) {
    GemmArgs g = valid_args();
    (which == 0 ? g.m : which == 1 ? g.n : g.batch) = 0;
    if (which == 1) {
      g.ldb = 1;  // B (K x 0) and C (M x 0) still need ld >= 1
      g.ldc = 1;
    }
    g.a = nullptr;
    g.b = nullptr;
    g.c = nullptr;
    expect_accepted(g);
  }
}

TEST(CheckArgs, ZeroKAcceptsNullAAndBButNeedsC) {
  GemmArgs g = valid_args();
  g.k = 0;
  g.lda = 1;
  g.a = nullptr;
  g.b = nullptr;
  expect_accepted(g);  // C = beta * C reads neither A nor B
  g.c = nullptr;
  expect_rejected(g, {"C is a null pointer"});
}

TEST(CheckArgs, ReportsTheFirstProblemInDocumentedOrder) {
  // dtype before layout before sizes before leading dimensions before pointers.
  GemmArgs g = valid_args();
  g.dtype = static_cast<DType>(9);
  g.op_a = static_cast<Op>(4);
  g.m = -5;
  g.c = nullptr;
  expect_rejected(g, {"unknown dtype 9"});
  g.dtype = DType::bf16;
  expect_rejected(g, {"unknown op_a 4"});
  g.op_a = Op::N;
  expect_rejected(g, {"negative"});
  g.m = kM;
  g.lda = 1;
  expect_rejected(g, {"lda=1"});
  g.lda = kK;
  expect_rejected(g, {"C is a null pointer"});
}

}  // namespace
}  // namespace tcgemm::detail

namespace tcgemm::detail {
namespace {

// The fused epilogue's arguments: named when wrong, quoted in every message.
TEST(CheckArgs, FusedEpilogueArguments) {
  GemmArgs g = valid_args();
  g.activation = static_cast<Activation>(5);
  expect_rejected(g, {"unknown activation 5", "silu"});
  g = valid_args();
  g.bias = kFakeA;
  g.bias_type = static_cast<BiasType>(2);
  expect_rejected(g, {"unknown bias_type 2"});
  g = valid_args();
  g.bias = reinterpret_cast<const void*>(uintptr_t{0x10001});
  expect_rejected(g, {"bias is not aligned to its 2-byte elements"});
  g.bias_type = BiasType::f32;
  g.bias = reinterpret_cast<const void*>(uintptr_t{0x10002});
  expect_rejected(g, {"bias is not aligned to its 4-byte elements"});
  g.bias = kFakeA;
  g.activation = Activation::gelu_tanh;
  expect_accepted(g);
  EXPECT_NE(describe(g).find(" bias=f32 activation=gelu_tanh"), std::string::npos) << describe(g);
  // A plain call reads as before.
  EXPECT_EQ(describe(valid_args()).find("bias"), std::string::npos);
  EXPECT_EQ(describe(valid_args()).find("activation"), std::string::npos);
}

}  // namespace
}  // namespace tcgemm::detail

namespace tcgemm::detail {
namespace {

// Operands on their 2-byte elements: a misaligned one would fault in a
// kernel (or in cuBLAS), sticky for the context. A and B only where read.
TEST(CheckArgs, OperandsOnTheirElements) {
  const uintptr_t odd = 0x50001;
  GemmArgs g = valid_args();
  g.c = reinterpret_cast<void*>(odd);
  expect_rejected(g, {"C is not aligned to its 2-byte elements"});
  g = valid_args();
  g.a = reinterpret_cast<const void*>(odd);
  expect_rejected(g, {"A is not aligned to its 2-byte elements"});
  g = valid_args();
  g.b = reinterpret_cast<const void*>(odd);
  expect_rejected(g, {"B is not aligned to its 2-byte elements"});
  g.k = 0;  // B is not read
  g.lda = 1;
  expect_accepted(g);
  g = valid_args();
  g.m = 0;  // nothing is read or written
  g.c = reinterpret_cast<void*>(odd);
  expect_accepted(g);
}

// K or alpha 0: C = beta * C, A and B not read (BLAS), so they may be null.
TEST(CheckArgs, AlphaZeroReadsNeitherAnorB) {
  GemmArgs g = valid_args();
  g.alpha = 0.0f;
  g.a = nullptr;
  g.b = nullptr;
  expect_accepted(g);
  EXPECT_FALSE(reads_a_and_b(g));
  g.alpha = -0.0f;
  expect_accepted(g);
  g.alpha = 1e-30f;
  expect_rejected(g, {"A is a null pointer"});
  EXPECT_TRUE(reads_a_and_b(g));
  g.alpha = std::numeric_limits<float>::quiet_NaN();  // NaN is not 0: the product is computed (and is NaN)
  EXPECT_TRUE(reads_a_and_b(g));
}

// A plain call's rows must be addressable as a batch's are: rows x ld in
// 64-bit byte offsets.
TEST(CheckArgs, APlainCallsRowsFitSixtyFourBitOffsets) {
  GemmArgs g = valid_args();
  g.m = (int64_t{1} << 31) - 1;
  g.ldc = int64_t{1} << 40;
  g.lda = kK;
  expect_rejected(g, {"C's rows x leading dimension overflows 64-bit byte offsets"});
  g = valid_args();
  g.lda = std::numeric_limits<int64_t>::max();
  expect_rejected(g, {"A's rows x leading dimension overflows 64-bit byte offsets"});
  g = valid_args(Op::N, Op::T);
  g.ldb = int64_t{1} << 62;  // 80 rows of 2^62 elements
  expect_rejected(g, {"B's rows x leading dimension overflows 64-bit byte offsets"});
}

// C must not share memory with what the call reads.
TEST(CheckArgs, CApartFromAAndB) {
  // In place: C is A (square, one leading dimension).
  GemmArgs g = valid_args();
  g.m = g.n = g.k = 64;
  g.lda = g.ldb = g.ldc = 64;
  g.c = const_cast<void*>(g.a);
  expect_rejected(g, {"C overlaps A in memory"});
  g.c = const_cast<void*>(g.b);
  expect_rejected(g, {"C overlaps B in memory"});
  // Side by side in one buffer's rows (x and y columns of one [64, 128] tensor): apart, accepted.
  const uintptr_t buffer = 0x100000;
  g.a = reinterpret_cast<const void*>(buffer);
  g.c = reinterpret_cast<void*>(buffer + 64 * 2);
  g.lda = g.ldc = 128;
  expect_accepted(g);
  // ... one element into A's columns: they share a column.
  g.c = reinterpret_cast<void*>(buffer + 63 * 2);
  expect_rejected(g, {"C overlaps A in memory"});
  // ... C's first row after A's last row: apart; on A's last row: not.
  g.c = reinterpret_cast<void*>(buffer + 64 * 128 * 2);
  expect_accepted(g);
  g.c = reinterpret_cast<void*>(buffer + 63 * 128 * 2);
  expect_rejected(g, {"C overlaps A in memory"});
  // Other leading dimensions, rows interleaved but apart: A's rows 256 elements apart hold 64, C's
  // rows (ldc 512) sit in the gaps between them.
  g.lda = 256;
  g.ldc = 512;
  g.c = reinterpret_cast<void*>(buffer + 128 * 2);
  expect_accepted(g);
  g.c = reinterpret_cast<void*>(buffer + 256 * 2 + 32 * 2);  // on A's second row
  expect_rejected(g, {"C overlaps A in memory"});
  // One row each, one leading dimension: C starting at A's row end, or ending at its start, is apart.
  g = valid_args();
  g.m = 1;
  g.lda = g.ldc = 256;
  g.a = reinterpret_cast<const void*>(buffer + 1024);
  g.c = reinterpret_cast<void*>(buffer + 1024 + kK * 2);
  expect_accepted(g);
  g.c = reinterpret_cast<void*>(buffer + 1024 - kN * 2);
  expect_accepted(g);
  g.c = reinterpret_cast<void*>(buffer + 1024 - kN * 2 + 2);
  expect_rejected(g, {"C overlaps A in memory"});
  // The bias is read by every tile's epilogue while others store.
  g = valid_args();
  g.bias = static_cast<const char*>(g.c) + 6;
  expect_rejected(g, {"C overlaps the bias in memory"});
  // ... on any row of a tall C whose pitch is not the bias's: the bias's one
  // row is walked, not C's (once C's rows were, and the budget of 4096
  // missed it past C's 4096th). C's rows hold 64 elements 136 apart, so a
  // bias of 64 fits between two of them.
  g = valid_args();
  g.m = 8192;
  g.n = g.ldb = 64;
  g.ldc = 136;
  g.a = reinterpret_cast<const void*>(uintptr_t{1} << 32);
  g.b = reinterpret_cast<const void*>(uintptr_t{1} << 33);
  g.activation = Activation::relu;
  const auto bias_at = [&](int64_t element) { return static_cast<const char*>(g.c) + element * 2; };
  for (const int64_t row : {0, 100, 4000, 4100, 6000, 8191}) {
    g.bias = bias_at(row * 136);
    expect_rejected(g, {"C overlaps the bias in memory"});
    g.bias = bias_at(row * 136 + 63);  // on the row's last element
    expect_rejected(g, {"C overlaps the bias in memory"});
    g.bias = bias_at(row * 136 + 64);  // in the gap after it
    expect_accepted(g);
  }
}

TEST(CheckArgs, BatchedCApartFromAAndB) {
  // Four problems; A's matrices stacked right after C's, then the last C moved onto the first A.
  GemmArgs g = valid_args();
  g.batch = 4;
  g.stride_a = kM * kK;
  g.stride_b = 0;  // one B for all
  g.stride_c = kM * kN;
  const uintptr_t c0 = 0x1000000;
  g.c = reinterpret_cast<void*>(c0);
  g.a = reinterpret_cast<const void*>(c0 + 4 * kM * kN * 2);
  expect_accepted(g);
  g.stride_c = kM * kN + kM * kK;  // C_i and A_i interleaved: C_0 A_0 C_1 A_1 ...
  g.a = reinterpret_cast<const void*>(c0 + kM * kN * 2);
  g.stride_a = g.stride_c;
  expect_accepted(g);
  g.a = reinterpret_cast<const void*>(c0 + (kM * kN - 10) * 2);  // A_i reaches into C_i's last row
  expect_rejected(g, {"C overlaps A in memory"});
  // B shared by every problem, inside C_2.
  g = valid_args();
  g.batch = 4;
  g.stride_c = kM * kN;
  g.c = reinterpret_cast<void*>(c0);
  g.b = reinterpret_cast<const void*>(c0 + 2 * kM * kN * 2);
  expect_rejected(g, {"C overlaps B in memory"});
}

}  // namespace
}  // namespace tcgemm::detail

namespace tcgemm::detail {
namespace {

// Every byte one operand's matrices cover (batch, rows, row length, all in
// elements of 2 bytes), counted from `origin`, within `bytes` of it.
std::vector<bool> covered(uintptr_t origin, uintptr_t base, int64_t count, int64_t stride, int64_t rows, int64_t cols,
                          int64_t ld, size_t bytes) {
  std::vector<bool> out(bytes, false);
  for (int64_t p = 0; p < count; ++p)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        for (int byte = 0; byte < 2; ++byte)
          out.at(base - origin + 2 * static_cast<uintptr_t>(p * stride + r * ld + c) + byte) = true;
  return out;
}

// The overlap check against every byte, on small random layouts (within its
// budget, so exact): refused exactly when C and A share a byte.
TEST(CheckArgs, OverlapAgreesWithEveryByte) {
  std::mt19937_64 rng(2026);
  const auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int refused = 0, accepted = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    GemmArgs g;
    // (op_a T: A stored K x M, other row counts than C's.)
    g.op_a = draw(0, 1) ? Op::N : Op::T;
    g.op_b = Op::N;
    g.m = draw(1, 6);
    g.n = draw(1, 6);
    g.k = draw(1, 6);
    const int64_t a_rows = g.op_a == Op::N ? g.m : g.k, a_cols = g.op_a == Op::N ? g.k : g.m;
    g.lda = a_cols + draw(0, 6);
    g.ldb = g.n;
    g.ldc = g.n + draw(0, 6);
    g.batch = draw(0, 2) == 0 ? draw(2, 3) : 1;
    if (g.batch > 1) {
      g.stride_a = draw(0, 60);
      g.stride_c = (g.m - 1) * g.ldc + g.n + draw(0, 10);  // C's own matrices apart
      g.stride_b = 0;
    }
    // A and C in one small buffer (2-byte aligned), B far away.
    const uintptr_t base = 1 << 20;
    // C anywhere near A, or (half the time) just by one of A's row ends, where an off-by-one shows.
    const int64_t a_at = draw(40, 80);
    const int64_t c_at = draw(0, 1) ? draw(0, 120)
                                    : a_at + g.lda * draw(-2, 2) + a_cols * draw(0, 1) + draw(-1, 1) - g.n * draw(0, 1);
    g.a = reinterpret_cast<const void*>(base + 2 * static_cast<uintptr_t>(a_at));
    g.c = reinterpret_cast<void*>(base + 2 * static_cast<uintptr_t>(std::max<int64_t>(c_at, 0)));
    g.b = reinterpret_cast<const void*>(uintptr_t{1} << 30);
    const size_t bytes = 4096;
    const std::vector<bool> a = covered(base, reinterpret_cast<uintptr_t>(g.a), g.batch,
                                        g.batch > 1 ? g.stride_a : 0, a_rows, a_cols, g.lda, bytes);
    const std::vector<bool> c = covered(base, reinterpret_cast<uintptr_t>(g.c), g.batch,
                                        g.batch > 1 ? g.stride_c : 0, g.m, g.n, g.ldc, bytes);
    bool share = false;
    for (size_t i = 0; i < bytes && !share; ++i) share = a[i] && c[i];
    const std::string why = check_args(g);
    ASSERT_EQ(why.find("C overlaps A") != std::string::npos, share) << why << " " << describe(g);
    (share ? refused : accepted) += 1;
  }
  EXPECT_GT(refused, 1000);
  EXPECT_GT(accepted, 1000);
}

}  // namespace
}  // namespace tcgemm::detail
