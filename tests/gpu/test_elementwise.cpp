// The element-wise check itself (support/elementwise.hpp): outputs built on
// the host, one rounding of an fp32 sum (as tcgemm computes) or two (alpha*AB
// rounded to the output type first), uploaded as C and judged on the GPU. The
// GPU's counts, worst ratio and first offender must be the host's, in every
// layout with padded leading dimensions, so the check that the fuzzer,
// `tcgemm check` and the numeric tests rely on reads A, B and C0 as GemmArgs
// describes them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "support/elementwise.hpp"
#include "support/error_bound.hpp"

namespace tcgemm::test {
namespace {

// The problem's operands on the host, indexed as GemmArgs lays them out.
struct HostOperands {
  GemmCase gc;
  std::vector<uint16_t> a, b, c0;

  explicit HostOperands(const Problem& prob) : gc(prob.gemm_case()) {
    const int64_t rows_a = gc.op_a == Op::N ? gc.m : gc.k, rows_b = gc.op_b == Op::N ? gc.k : gc.n;
    a = download(prob.a(), static_cast<size_t>(rows_a * gc.lda));
    b = download(prob.b(), static_cast<size_t>(rows_b * gc.ldb));
    if (gc.beta != 0.0f) c0 = download(prob.c0(), static_cast<size_t>(gc.m * gc.ldc));
  }
  float a_at(int64_t i, int64_t kk) const {
    return to_float(gc.dtype, a[gc.op_a == Op::N ? i * gc.lda + kk : kk * gc.lda + i]);
  }
  float b_at(int64_t kk, int64_t j) const {
    return to_float(gc.dtype, b[gc.op_b == Op::N ? kk * gc.ldb + j : j * gc.ldb + kk]);
  }
  float c0_at(int64_t i, int64_t j) const { return to_float(gc.dtype, c0[i * gc.ldc + j]); }

  // fp32 products in K order (fmaf), then alpha and beta: tcgemm's sum.
  float fp32_sum(int64_t i, int64_t j) const {
    float acc = 0.0f;
    for (int64_t kk = 0; kk < gc.k; ++kk) acc = std::fmaf(a_at(i, kk), b_at(kk, j), acc);
    return acc;
  }
  uint16_t rounded_once(int64_t i, int64_t j) const {
    float x = gc.alpha * fp32_sum(i, j);
    if (gc.beta != 0.0f) x = std::fmaf(gc.beta, c0_at(i, j), x);
    return from_float(gc.dtype, x);
  }
  uint16_t rounded_twice(int64_t i, int64_t j) const {
    const float t = to_float(gc.dtype, from_float(gc.dtype, gc.alpha * fp32_sum(i, j)));
    return from_float(gc.dtype, gc.beta != 0.0f ? std::fmaf(gc.beta, c0_at(i, j), t) : t);
  }
  support::ElementTerms terms(int64_t i, int64_t j) const {
    double sum = 0.0, abs_sum = 0.0;
    for (int64_t kk = 0; kk < gc.k; ++kk) {
      const double x = a_at(i, kk), y = b_at(kk, j);
      sum = std::fma(x, y, sum);
      abs_sum = std::fma(std::fabs(x), std::fabs(y), abs_sum);
    }
    support::ElementTerms t{gc.alpha * sum, std::fabs(static_cast<double>(gc.alpha)) * abs_sum, 0.0};
    if (gc.beta != 0.0f) {
      t.ref += static_cast<double>(gc.beta) * c0_at(i, j);
      t.abs_c = std::fabs(static_cast<double>(gc.beta) * c0_at(i, j));
    }
    return t;
  }
};

// What the GPU check must report for `c` (M x N, ldc), judged on the host.
struct Expected {
  int64_t beyond = 0, beyond_rounded_twice = 0, nonfinite = 0;
  double worst = 0.0;
  int64_t first = -1, first_rounded_twice = -1;  // row * n + col
};
Expected judge(const HostOperands& h, const std::vector<uint16_t>& c) {
  const GemmCase& gc = h.gc;
  const support::OutputRounding out = support::output_rounding(gc.dtype);
  Expected e;
  for (int64_t i = 0; i < gc.m; ++i)
    for (int64_t j = 0; j < gc.n; ++j) {
      const support::ElementTerms t = h.terms(i, j);
      const double got = to_float(gc.dtype, c[i * gc.ldc + j]), diff = std::fabs(got - t.ref);
      const double bound = support::elementwise_bound(t, gc.k, out);
      const double bound2 = support::elementwise_bound_rounded_twice(t, gc.k, out);
      e.nonfinite += !std::isfinite(got);
      if (!(diff <= bound) && e.beyond++ == 0) e.first = i * gc.n + j;
      if (!(diff <= bound2) && e.beyond_rounded_twice++ == 0) e.first_rounded_twice = i * gc.n + j;
      if (std::isfinite(diff)) e.worst = std::max(e.worst, diff / bound);
    }
  return e;
}

std::vector<uint16_t> host_output(const HostOperands& h, bool twice) {
  const GemmCase& gc = h.gc;
  std::vector<uint16_t> c(static_cast<size_t>(gc.m * gc.ldc), poison_bits(gc.dtype));
  for (int64_t i = 0; i < gc.m; ++i)
    for (int64_t j = 0; j < gc.n; ++j) c[i * gc.ldc + j] = twice ? h.rounded_twice(i, j) : h.rounded_once(i, j);
  return c;
}

support::ElementwiseStats check_on_gpu(const Problem& prob, const std::vector<uint16_t>& c) {
  check_cuda(cudaMemcpy(prob.c(), c.data(), c.size() * sizeof(uint16_t), cudaMemcpyHostToDevice), "upload C");
  const GemmCase& gc = prob.gemm_case();
  return support::check_elementwise(prob.args(prob.c()), gc.beta != 0.0f ? prob.c0() : nullptr);
}

void expect_same(const support::ElementwiseStats& got, const Expected& want, const GemmCase& gc,
                 const std::string& what) {
  EXPECT_EQ(got.count, gc.m * gc.n) << what;
  EXPECT_EQ(got.beyond, want.beyond) << what << "; GPU's first " << got.first.str();
  EXPECT_EQ(got.beyond_rounded_twice, want.beyond_rounded_twice) << what;
  EXPECT_EQ(got.nonfinite, want.nonfinite) << what;
  EXPECT_NEAR(got.worst, want.worst, 1e-9 * want.worst) << what;
  auto index = [&](const support::BoundViolation& v) { return v.any() ? v.row * gc.n + v.col : int64_t{-1}; };
  EXPECT_EQ(index(got.first), want.first) << what << "; GPU's first " << got.first.str();
  EXPECT_EQ(index(got.first_rounded_twice), want.first_rounded_twice) << what;
}

class ElementwiseCheck : public GpuTest {};

// One rounding passes everywhere; a second rounding of alpha*AB (beta != 0)
// breaks the bound in some elements and never the looser bound; a NaN and an
// element off by 1 break both. The GPU agrees with the host each time.
TEST_F(ElementwiseCheck, AgreesWithTheHostInEveryLayout) {
  uint64_t seed = 12000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16})
      for (const float beta : {0.0f, 1.0f, -0.75f}) {
        GemmCase gc = make_case(dt, layout, 37, 29, 19, Fill::uniform_pm1, ++seed, /*pad=*/3);
        gc.alpha = beta == 0.0f ? 0.5f : 1.0f;
        gc.beta = beta;
        const std::string what = gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);
        if (beta != 0.0f) prob.fill_outputs(Fill::uniform_pm1, seed + 77);
        const HostOperands h(prob);

        const std::vector<uint16_t> once = host_output(h, false);
        const Expected want_once = judge(h, once);
        EXPECT_EQ(want_once.beyond, 0);
        EXPECT_GT(want_once.worst, 0.0);
        expect_same(check_on_gpu(prob, once), want_once, gc, "rounded once " + what);

        const std::vector<uint16_t> twice = host_output(h, true);
        const Expected want_twice = judge(h, twice);
        if (beta != 0.0f) {
          EXPECT_GT(want_twice.beyond, 0) << "the test data should show a second rounding";
        }
        EXPECT_EQ(want_twice.beyond_rounded_twice, 0);
        expect_same(check_on_gpu(prob, twice), want_twice, gc, "rounded twice " + what);

        std::vector<uint16_t> wrong = once;
        const int64_t nan_at = 5 * gc.ldc + 7, off_at = 20 * gc.ldc + 3;
        wrong[nan_at] = poison_bits(dt);
        wrong[off_at] = from_float(dt, to_float(dt, wrong[off_at]) + 1.0f);  // far beyond both bounds
        const Expected want_wrong = judge(h, wrong);
        EXPECT_EQ(want_wrong.nonfinite, 1);
        EXPECT_EQ(want_wrong.beyond_rounded_twice, 2);
        EXPECT_EQ(want_wrong.first_rounded_twice, 5 * gc.n + 7);
        const support::ElementwiseStats got_wrong = check_on_gpu(prob, wrong);
        expect_same(got_wrong, want_wrong, gc, "NaN at (5,7), 1 off at (20,3) " + what);
        EXPECT_EQ(got_wrong.first.row, 5);
        EXPECT_EQ(got_wrong.first.col, 7);
        EXPECT_EQ(got_wrong.first.got_bits, poison_bits(dt));
      }
}

// The first offender's details are the element's own: its bits, its float64
// reference and the bound it broke.
TEST_F(ElementwiseCheck, FirstOffenderIsDescribed) {
  GemmCase gc = make_case(DType::bf16, kLayouts[3], 64, 1, 64, Fill::uniform_pm1, 12500);
  gc.beta = 1.0f;
  Problem prob(gc);
  prob.fill_outputs(Fill::uniform_pm1, 12501);
  const HostOperands h(prob);
  std::vector<uint16_t> c = host_output(h, false);
  c[9 * gc.ldc] = from_float(gc.dtype, to_float(gc.dtype, c[9 * gc.ldc]) + 1.0f);
  const support::ElementwiseStats st = check_on_gpu(prob, c);
  ASSERT_EQ(st.beyond, 1) << st.first.str();
  const support::ElementTerms t = h.terms(9, 0);
  EXPECT_EQ(st.first.row, 9);
  EXPECT_EQ(st.first.col, 0);
  EXPECT_EQ(st.first.got_bits, c[9 * gc.ldc]);
  EXPECT_DOUBLE_EQ(st.first.terms.ref, t.ref);
  EXPECT_DOUBLE_EQ(st.first.terms.abs_ab, t.abs_ab);
  EXPECT_DOUBLE_EQ(st.first.terms.abs_c, t.abs_c);
  EXPECT_DOUBLE_EQ(st.first.bound, support::elementwise_bound(t, gc.k, support::output_rounding(gc.dtype)));
  EXPECT_TRUE(contains(st.first.str(), "C[9,0]")) << st.first.str();
}

}  // namespace
}  // namespace tcgemm::test
