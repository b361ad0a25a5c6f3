// check_args / describe: every rejection names the problem and ends with the
// whole case, and the documented degenerate cases are accepted.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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
  // M == 0 or N == 0: nothing is read or written, so every pointer may be null.
  for (int which = 0; which < 2; ++which) {
    GemmArgs g = valid_args();
    (which == 0 ? g.m : g.n) = 0;
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
