// Inputs TMA cannot describe (a base not 16-byte aligned, a leading dimension
// not a multiple of 8) still give correct results, through cuBLAS, with a
// reason that says why; tcgemm_only refuses them and leaves C alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_case.hpp"

namespace tcgemm::test {
namespace {

struct Misalignment {
  const char* name;
  void (*apply)(GemmCase&);
};

// One element (2 bytes) off for a base; +1 element for a leading dimension,
// which also makes it odd.
const Misalignment kMisalignments[] = {
    {"base_a_plus_1", [](GemmCase& c) { c.offset_a = 1; }},  // A 2 bytes past a 256-byte boundary
    {"base_b_plus_1", [](GemmCase& c) { c.offset_b = 1; }},  // B likewise
    {"base_c_plus_1", [](GemmCase& c) { c.offset_c = 1; }},  // C likewise
    {"lda_plus_1", [](GemmCase& c) { c.lda += 1; }},         // row stride not a multiple of 16 bytes
    {"ldb_plus_1", [](GemmCase& c) { c.ldb += 1; }},         // likewise for B
    {"ldc_plus_1", [](GemmCase& c) { c.ldc += 1; }},         // likewise for C
};

class Fallback : public GpuTest {};

TEST_F(Fallback, MisalignedInputsRunOnCublasAndMatchTheReference) {
  uint64_t seed = 8000;
  for (const Misalignment& mis : kMisalignments)
    for (const Layout& layout : kLayouts)
      for (DType dt : {DType::f16, DType::bf16}) {
        GemmCase gc = make_case(dt, layout, 129, 257, 65, Fill::small_int, ++seed);
        mis.apply(gc);
        const std::string what = std::string(mis.name) + " " + gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        const Plan got = run_gemm(prob.args(prob.c()));
        TCGEMM_ASSERT_OK(got, "gemm " + what);
        EXPECT_EQ(got.backend, Backend::cublas) << "reason: " << got.reason;
        EXPECT_TRUE(mentions_alignment(got.reason))
            << "the reason should say what is misaligned: '" << got.reason << "'";
        expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                         what);
      }
}

// Random inputs with a long K through the fallback: fp32 accumulation, not
// fp16, or the normwise bound fails.
TEST_F(Fallback, MisalignedNumericLongK) {
  uint64_t seed = 8500;
  for (DType dt : {DType::f16, DType::bf16}) {
    GemmCase gc = make_case(dt, kLayouts[0], 256, 264, 4096, Fill::uniform_pm1, ++seed);
    gc.offset_a = 1;
    const std::string what = gc.describe();
    SCOPED_TRACE(what);
    Problem prob(gc);
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
    const Plan got = run_gemm(prob.args(prob.c()));
    TCGEMM_ASSERT_OK(got, "gemm " + what);
    EXPECT_EQ(got.backend, Backend::cublas) << got.reason;
    expect_close(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc), dt, what);
    expect_within_bound(prob, got.backend, what);
  }
}

TEST_F(Fallback, TcgemmOnlyRefusesMisalignedInputsAndLeavesCUntouched) {
  uint64_t seed = 9000;
  for (const Misalignment& mis : kMisalignments)
    for (DType dt : {DType::f16, DType::bf16}) {
      GemmCase gc = make_case(dt, kLayouts[1], 129, 257, 65, Fill::small_int, ++seed);
      mis.apply(gc);
      const std::string what = std::string(mis.name) + " " + gc.describe();
      SCOPED_TRACE(what);
      Problem prob(gc);
      const Plan got = run_gemm(prob.args(prob.c()), Options{Prefer::tcgemm_only, 0});
      EXPECT_EQ(got.status, Status::unsupported) << to_string(got.status) << ": " << got.reason;
      EXPECT_TRUE(mentions_alignment(got.reason)) << "'" << got.reason << "'";
      const std::vector<uint16_t> c = prob.download_c();
      int64_t changed = 0;
      for (uint16_t v : c) changed += v != poison_bits(dt);
      EXPECT_EQ(changed, 0) << "a refused call wrote to C";
    }
}

// The same misaligned call, aligned, goes to sm90: the fallback is chosen for
// the alignment, not for the shape.
TEST_F(Fallback, AlignedTwinRunsOnSm90) {
  for (const Layout& layout : kLayouts) {
    const GemmCase gc = make_case(DType::f16, layout, 129, 257, 65, Fill::small_int, 9500);
    Problem prob(gc);
    const Plan got = plan(prob.args(prob.c()));
    TCGEMM_ASSERT_OK(got, gc.describe());
    EXPECT_EQ(got.backend, own_backend()) << gc.describe() << ": " << got.reason;
  }
}

}  // namespace
}  // namespace tcgemm::test
