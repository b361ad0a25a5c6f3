// Strided batched GEMM (GemmArgs::batch): one launch computes every
// C_i = act(alpha * op(A_i) op(B_i) + bias) + beta * C_i. On small-integer
// inputs (every accumulator exact) each C_i equals the batched reference GEMM
// bit for bit AND equals a plain (batch 1) tcgemm call on that problem's
// matrices bit for bit (batch invariance); on random inputs each C_i is
// within the element-wise bound. Between the C_i lie poisoned guard rows
// (stride_c > M * ldc) that no call may write. And the batches tcgemm's kernel
// cannot take fall back to cuBLAS or are refused with nothing written.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "tcgemm/tcgemm.h"
#include "support/elementwise.hpp"
#include "support/kernel_variants.hpp"

namespace tcgemm::test {
namespace {

class Batched : public GpuTest {};

// One batched problem: every A_i, B_i and C_i in one allocation per operand,
// `stride` elements apart. A and B are packed (stride = stored rows x ld, or
// 0 for an operand repeated for every batch); C_i is followed by kGuardRows
// poisoned rows (stride_c = (M + kGuardRows) x ldc) before C_{i+1} starts,
// unless `side_by_side` puts the C_i next to each other in C's rows.
struct BatchedCase {
  GemmCase base;  // the shape, layout, leading dimensions, alpha, beta, fill, seed of every problem
  int64_t batch = 1;
  bool repeat_a = false, repeat_b = false;  // stride 0
  bool side_by_side = false;                // C_i at column i * stride_c of one M x (batch x stride_c) C

  std::string describe() const {
    return base.describe() + " batch=" + std::to_string(batch) + (repeat_a ? " stride_a=0" : "") +
           (repeat_b ? " stride_b=0" : "") + (side_by_side ? " C side by side" : "");
  }
};

class BatchedProblem {
 public:
  explicit BatchedProblem(BatchedCase bc) : case_(bc) {
    GemmCase& g = case_.base;
    const bool ta = g.op_a == Op::T, tb = g.op_b == Op::T;
    rows_a_ = ta ? g.k : g.m;
    cols_a_ = ta ? g.m : g.k;
    rows_b_ = tb ? g.n : g.k;
    cols_b_ = tb ? g.k : g.n;
    stride_a_ = case_.repeat_a ? 0 : rows_a_ * g.lda;
    stride_b_ = case_.repeat_b ? 0 : rows_b_ * g.ldb;
    if (case_.side_by_side) {
      stride_c_ = round_up(g.n, 8);
      g.ldc = stride_c_ * case_.batch;
      // (A tail, so that every C_i has M + kGuardRows rows of ldc for compare().)
      c_elems_ = (g.m + kGuardRows) * g.ldc + (case_.batch - 1) * stride_c_;
    } else {
      stride_c_ = (g.m + kGuardRows) * g.ldc;
      c_elems_ = stride_c_ * case_.batch;
    }
    a_ = Buffer(static_cast<size_t>(std::max<int64_t>(rows_a_ * g.lda * matrices(case_.repeat_a), 1)));
    b_ = Buffer(static_cast<size_t>(std::max<int64_t>(rows_b_ * g.ldb * matrices(case_.repeat_b), 1)));
    for (Buffer* c : {&c_, &c_ref_, &c_single_, &c0_}) *c = Buffer(static_cast<size_t>(c_elems_));
    const uint16_t poison = poison_bits(g.dtype);
    fill_bits(a_.data(), a_.size(), poison);
    fill_bits(b_.data(), b_.size(), poison);
    // Each problem's own inputs (seeded by its index): a kernel that reads
    // another batch's A or B, or the wrong matrix of a repeated one, differs.
    for (int64_t i = 0; i < matrices(case_.repeat_a); ++i)
      support::fill_random(g.dtype, a_.data() + i * rows_a_ * g.lda, rows_a_, cols_a_, g.lda, distribution(g.fill),
                           g.seed * 1000 + 2 * static_cast<uint64_t>(i), poison);
    for (int64_t i = 0; i < matrices(case_.repeat_b); ++i)
      support::fill_random(g.dtype, b_.data() + i * rows_b_ * g.ldb, rows_b_, cols_b_, g.ldb, distribution(g.fill),
                           g.seed * 1000 + 2 * static_cast<uint64_t>(i) + 1, poison);
    reset_outputs();
  }

  const BatchedCase& batched_case() const { return case_; }
  const GemmCase& base() const { return case_.base; }
  int64_t stride_c() const { return stride_c_; }

  // Every C poisoned outside the C_i; inside them, for beta != 0, the same
  // seeded values (C0) in each; else poison too (C is not read).
  void reset_outputs() {
    const GemmCase& g = case_.base;
    const uint16_t poison = poison_bits(g.dtype);
    if (case_.side_by_side && g.beta != 0.0f) {
      // (fill_random poisons a matrix's padding columns, which here are the
      // neighbours' C: the small integers are written from the host.)
      if (g.fill != Fill::small_int) throw std::runtime_error("side-by-side C is filled with small integers only");
      std::vector<uint16_t> host(static_cast<size_t>(c_elems_), poison);
      for (int64_t i = 0; i < case_.batch; ++i)
        for (int64_t r = 0; r < g.m; ++r)
          for (int64_t col = 0; col < g.n; ++col)
            host[static_cast<size_t>(i * stride_c_ + r * g.ldc + col)] = from_float(
                g.dtype, static_cast<float>(static_cast<int64_t>((r * 131 + col * 31 + i * 7 + g.seed) % 5) - 2));
      for (Buffer* c : {&c_, &c_ref_, &c_single_, &c0_})
        check_cuda(cudaMemcpy(c->data(), host.data(), host.size() * sizeof(uint16_t), cudaMemcpyHostToDevice),
                   "filling C");
      return;
    }
    for (Buffer* c : {&c_, &c_ref_, &c_single_, &c0_}) {
      fill_bits(c->data(), c->size(), poison);
      if (g.beta == 0.0f) continue;
      for (int64_t i = 0; i < case_.batch; ++i)
        support::fill_random(g.dtype, c->data() + i * stride_c_, g.m, g.n, g.ldc, distribution(g.fill),
                             g.seed * 1000 + 777 + static_cast<uint64_t>(i), poison);
    }
    check_cuda(cudaDeviceSynchronize(), "filling C (" + describe() + ")");
  }

  // The batched call writing into `c` (c(), c_ref()).
  GemmArgs args(uint16_t* c) const {
    GemmArgs a = case_.base.args(a_.data(), b_.data(), c);
    a.batch = case_.batch;
    a.stride_a = stride_a_;
    a.stride_b = stride_b_;
    a.stride_c = stride_c_;
    return a;
  }
  // Problem i alone, as a plain call (batch 1) writing into `c`'s C_i.
  GemmArgs single(int64_t i, uint16_t* c) const {
    GemmArgs a = args(c);
    a.a = a_.data() + i * stride_a_;
    a.b = b_.data() + i * stride_b_;
    a.c = c + i * stride_c_;
    a.batch = 1;
    a.stride_a = a.stride_b = a.stride_c = 0;
    return a;
  }

  uint16_t* c() const { return c_.data(); }
  uint16_t* c_ref() const { return c_ref_.data(); }
  uint16_t* c_single() const { return c_single_.data(); }
  const uint16_t* c0(int64_t i) const { return c0_.data() + i * stride_c_; }
  std::vector<uint16_t> download_all(const uint16_t* c) const { return download(c, static_cast<size_t>(c_elems_)); }

  std::string describe() const { return case_.describe(); }

 private:
  int64_t matrices(bool repeated) const { return repeated ? 1 : case_.batch; }

  using Buffer = support::DeviceBuffer<uint16_t>;
  BatchedCase case_;
  int64_t rows_a_ = 0, cols_a_ = 0, rows_b_ = 0, cols_b_ = 0;
  int64_t stride_a_ = 0, stride_b_ = 0, stride_c_ = 0, c_elems_ = 0;
  Buffer a_, b_, c_, c_ref_, c_single_, c0_;
};

// `got` against `want`, both whole C buffers of the problem: stacked, batch
// by batch (each C_i and its guard rows, which must keep their poison, as
// compare() checks them); side by side, the whole buffer bit for bit (the
// reference writes only the C_i, so a stray write anywhere differs).
std::vector<Comparison> compare_batches(const BatchedProblem& prob, const std::vector<uint16_t>& got,
                                        const std::vector<uint16_t>& want) {
  const GemmCase& g = prob.base();
  const BatchedCase& bc = prob.batched_case();
  std::vector<Comparison> out;
  for (int64_t i = 0; i < bc.batch; ++i) {
    const int64_t first = i * prob.stride_c();
    const int64_t span = (g.m + kGuardRows) * g.ldc;
    const std::vector<uint16_t> got_i(got.begin() + first, got.begin() + first + span);
    const std::vector<uint16_t> want_i(want.begin() + first, want.begin() + first + span);
    if (!bc.side_by_side) {
      out.push_back(compare(g.dtype, got_i, want_i, poison_bits(g.dtype), g.m, g.n, g.ldc));
    } else {
      // (Columns past N of C_i are the next problems' C: judged below, whole.)
      Comparison c = compare(g.dtype, got_i, want_i, poison_bits(g.dtype), g.m, g.n, g.ldc);
      c.outside_changed = 0;
      c.first_outside.clear();
      out.push_back(c);
    }
  }
  if (bc.side_by_side) {
    Comparison whole;
    for (size_t e = 0; e < got.size(); ++e)
      if (got[e] != want[e] && whole.outside_changed++ == 0)
        whole.first_outside = "element " + std::to_string(e) + " of C (row " +
                              std::to_string(static_cast<int64_t>(e) / g.ldc) + ", column " +
                              std::to_string(static_cast<int64_t>(e) % g.ldc) + ") differs from the reference";
    EXPECT_EQ(whole.outside_changed, 0) << "side by side: " << whole.first_outside << " (" << prob.describe() << ")";
  }
  return out;
}

// Runs the batched call (options) and checks it: bit for bit against the
// batched reference on small integers (else the normwise bound, and each
// problem within the element-wise bound), and bit for bit against a plain
// tcgemm call per problem (every fill). `args_hook` adds a fused epilogue.
template <typename Hook>
void expect_batched_correct(BatchedProblem& prob, const Options& options, const std::string& what, Hook args_hook,
                            double min_nonzero = 0.5, const support::KernelVariant* forced = nullptr) {
  const GemmCase& g = prob.base();
  const BatchedCase& bc = prob.batched_case();
  const std::string full = prob.describe() + " " + what;
  SCOPED_TRACE(full);
  prob.reset_outputs();
  GemmArgs ref_args = prob.args(prob.c_ref());
  args_hook(ref_args);
  TCGEMM_ASSERT_OK(run_reference(ref_args), "reference " + full);
  GemmArgs call = prob.args(prob.c());
  args_hook(call);
  const Plan plan = run_gemm(call, options);
  TCGEMM_ASSERT_OK(plan, full);
  EXPECT_EQ(plan.backend, own_backend()) << "tcgemm's kernel takes a TMA-compatible batch: " << plan.reason;
  if (forced != nullptr) expect_ran(plan, *forced, full);
  const std::vector<uint16_t> got = prob.download_all(prob.c());
  const std::vector<Comparison> vs_ref = compare_batches(prob, got, prob.download_all(prob.c_ref()));
  for (int64_t i = 0; i < bc.batch; ++i) {
    const std::string label = full + " kernel " + plan.kernel + " problem " + std::to_string(i);
    if (g.fill == Fill::small_int) {
      expect_identical(vs_ref[static_cast<size_t>(i)], label, min_nonzero);
    } else {
      expect_close(vs_ref[static_cast<size_t>(i)], g.dtype, label);
      GemmArgs one = prob.single(i, prob.c());
      args_hook(one);
      const support::ElementwiseStats st = support::check_elementwise(one, g.beta != 0.0f ? prob.c0(i) : nullptr);
      EXPECT_EQ(st.beyond, 0) << label << ": " << st.first.str();
    }
    if (::testing::Test::HasFailure()) return;  // one problem's report is enough
  }
  // Batch invariance: each problem alone, by a plain call, gives the same bits.
  for (int64_t i = 0; i < bc.batch; ++i) {
    GemmArgs one = prob.single(i, prob.c_single());
    args_hook(one);
    TCGEMM_ASSERT_OK(run_gemm(one), full + " plain call of problem " + std::to_string(i));
  }
  const std::vector<Comparison> vs_single = compare_batches(prob, got, prob.download_all(prob.c_single()));
  for (int64_t i = 0; i < bc.batch; ++i) {
    const Comparison& c = vs_single[static_cast<size_t>(i)];
    EXPECT_EQ(c.bit_mismatches, 0) << "problem " << i << " of the batch differs from a plain call on it: " << full
                                   << "\n  " << c.summary();
    if (c.bit_mismatches != 0) return;
  }
}
void expect_batched_correct(BatchedProblem& prob, const Options& options, const std::string& what) {
  expect_batched_correct(prob, options, what, [](GemmArgs&) {});
}

// Elements that differ between two whole C buffers (padding and guard rows included).
int64_t differences(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  if (a.size() != b.size()) return -1;
  int64_t d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += a[i] != b[i];
  return d;
}

BatchedCase make_batched(DType dt, Layout layout, int64_t m, int64_t n, int64_t k, int64_t batch, Fill fill,
                         uint64_t seed, float beta = 0.0f) {
  BatchedCase bc;
  bc.base = make_case(dt, layout, m, n, k, fill, seed);
  bc.base.beta = beta;
  bc.batch = batch;
  return bc;
}

// Every layout and type, batches of 1, 3 and 37, ragged shapes (M, N, K not
// multiples of any tile; N odd: the element-by-element edge), beta 0 and not.
TEST_F(Batched, EveryLayoutEqualsTheReferenceAndPlainCalls) {
  uint64_t seed = 60000;
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{130, 200, 72}, Shape{77, 61, 40}})
    for (const Layout& layout : kLayouts)
      for (DType dt : {DType::f16, DType::bf16})
        for (int64_t batch : {1, 3, 37})
          for (float beta : {0.0f, 0.5f}) {
            BatchedCase bc = make_batched(dt, layout, s.m, s.n, s.k, batch, Fill::small_int, ++seed, beta);
            bc.base.alpha = 0.5f;
            BatchedProblem prob(bc);
            expect_batched_correct(prob, Options{}, "");
          }
}

// Random inputs: the normwise bound and every element within the
// element-wise bound of its problem, and the plain calls' bits.
TEST_F(Batched, RandomInputsWithinTheElementwiseBound) {
  uint64_t seed = 61000;
  for (const Layout& layout : {kLayouts[0], kLayouts[1], kLayouts[3]})
    for (DType dt : {DType::f16, DType::bf16}) {
      BatchedProblem prob(make_batched(dt, layout, 200, 136, 520, 5, Fill::uniform_pm1, ++seed, 0.75f));
      expect_batched_correct(prob, Options{}, "");
    }
}

// The shapes batches are for: many problems each too small to fill the GPU.
TEST_F(Batched, SmallProblemsAndAttentionLikeBatches) {
  uint64_t seed = 62000;
  for (DType dt : {DType::f16, DType::bf16}) {
    // 128 problems of 64 x 64 x 64 (NN).
    BatchedProblem small(make_batched(dt, kLayouts[0], 64, 64, 64, 128, Fill::small_int, ++seed));
    expect_batched_correct(small, Options{}, "");
    // Attention scores Q K^T: 32 heads of 128 x 128 x 64 (NT), and P V (NN).
    BatchedProblem scores(make_batched(dt, kLayouts[1], 128, 128, 64, 32, Fill::small_int, ++seed));
    expect_batched_correct(scores, Options{}, "");
    BatchedProblem values(make_batched(dt, kLayouts[0], 128, 64, 128, 32, Fill::small_int, ++seed, 1.0f));
    expect_batched_correct(values, Options{}, "");
  }
  // Decoding-like: a few rows per problem (the 64-row / single-CTA tiles).
  BatchedProblem decode(make_batched(DType::bf16, kLayouts[1], 8, 520, 256, 12, Fill::small_int, ++seed, 0.25f));
  expect_batched_correct(decode, Options{}, "");
}

// One A (or B) for every problem: stride 0. The kernel reads its one matrix
// (batch coordinate 0), each problem with its own other operand.
TEST_F(Batched, RepeatedOperandWithStrideZero) {
  uint64_t seed = 63000;
  for (const Layout& layout : kLayouts)
    for (int which = 0; which < 2; ++which) {
      BatchedCase bc = make_batched(DType::f16, layout, 150, 100, 88, 6, Fill::small_int, ++seed, 1.0f);
      (which == 0 ? bc.repeat_a : bc.repeat_b) = true;
      BatchedProblem prob(bc);
      expect_batched_correct(prob, Options{}, "");
    }
}

// The C_i side by side in C's rows (ldc = batch x stride_c, e.g. attention
// heads in one [M, heads * N] tensor): no problem's store may touch its
// neighbours' columns, N odd included (the element-by-element edge).
// (M = 300 with N = 64: C's batch stride, 128 bytes, is far below a
// matrix's span, as in any [M, heads * N] tensor: TMA must take it.)
TEST_F(Batched, SideBySideOutputsStayApart) {
  uint64_t seed = 64000;
  struct Shape {
    int64_t m, n;
  };
  for (const Shape s : {Shape{100, 64}, Shape{100, 61}, Shape{100, 200}, Shape{300, 64}})
    for (float beta : {0.0f, 1.0f}) {
      BatchedCase bc = make_batched(DType::bf16, kLayouts[1], s.m, s.n, 64, 5, Fill::small_int, ++seed, beta);
      bc.side_by_side = true;
      BatchedProblem prob(bc);
      expect_batched_correct(prob, Options{}, "");
    }
}

// Every configuration of the device's family takes a batch: the panel and
// register epilogues, clusters, ping-pong, Cluster Launch Control; and, at
// N = 320 with K = 96, sm90's paired stores (the pair map's fourth
// dimension; N a multiple of 64 whose last pair is half past N) with a
// scaled C.
TEST_F(Batched, EveryConfigurationTakesABatch) {
  struct Shape {
    int64_t m, n, k;
    float beta;
  };
  uint64_t seed = 65000;
  for (const Shape& s : {Shape{300, 330, 160, 1.0f}, Shape{200, 320, 96, 0.5f}})
    for (const support::KernelVariant& v : support::builtin_variants(own_backend()))
      for (const Layout& layout : {kLayouts[0], kLayouts[1]}) {
        if (!v.builds(layout.a, layout.b)) continue;
        BatchedProblem prob(make_batched(DType::bf16, layout, s.m, s.n, s.k, 3, Fill::small_int, ++seed, s.beta));
        expect_batched_correct(prob, v.options, v.label, [](GemmArgs&) {}, 0.5, &v);
      }
}

// A batch whose C outgrows L2 where no problem's C alone does: the batch's
// stores carry an L2 evict-first policy (common/output_policy.hpp), the
// plain calls' stores do not, and the bits are the same; beta != 0 too.
TEST_F(Batched, COutgrowingL2EqualsPlainCalls) {
  int device = 0, l2_bytes = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), cudaSuccess);
  const int64_t m = 1024, n = 2048, k = 64;  // 4 MiB of C a problem
  const int64_t batch = l2_bytes / (m * n * 2) + 2;
  uint64_t seed = 65500;
  for (const Layout& layout : {kLayouts[0], kLayouts[1]}) {
    BatchedProblem prob(make_batched(DType::bf16, layout, m, n, k, batch, Fill::small_int, ++seed,
                                     layout.b == Op::T ? 0.5f : 0.0f));
    expect_batched_correct(prob, Options{}, "C of " + std::to_string(batch) + " problems, larger than L2");
  }
}

// The fused epilogue with a batch: one bias for every problem.
TEST_F(Batched, FusedEpilogueSharesOneBias) {
  uint64_t seed = 66000;
  for (DType dt : {DType::f16, DType::bf16})
    for (float beta : {0.0f, 0.5f}) {
      BatchedCase bc = make_batched(dt, kLayouts[1], 130, 131, 96, 4, Fill::small_int, ++seed, beta);
      bc.base.alpha = 0.25f;
      BatchedProblem prob(bc);
      // Integers in [-3, 3] over 4: exact in every type.
      std::vector<float> host(static_cast<size_t>(bc.base.n));
      for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int>(i * 5 % 7) - 3) / 4.0f;
      support::DeviceBuffer<float> bias(host.size());
      check_cuda(cudaMemcpy(bias.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "bias");
      for (Activation act : {Activation::relu, Activation::gelu, Activation::silu})
        expect_batched_correct(
            prob, Options{}, std::string("bias=f32 activation=") + to_string(act),
            [&](GemmArgs& g) {
              g.bias = bias.data();
              g.bias_type = BiasType::f32;
              g.activation = act;
            },
            act == Activation::relu ? 0.35 : 0.5);
    }
}

// K == 0: every C_i = beta * C_i, nothing else written.
// The elements of some C_i that are not 2 * C_i (as beta = 2 with K or
// alpha 0 leaves them), and those written between the C_i.
struct Doubled {
  int64_t wrong = 0, outside = 0;
};
Doubled check_doubled(const BatchedProblem& prob) {
  const GemmCase& g = prob.base();
  const std::vector<uint16_t> got = prob.download_all(prob.c());
  const std::vector<uint16_t> c0 = prob.download_all(prob.c0(0));
  Doubled d;
  for (size_t e = 0; e < got.size(); ++e) {
    const int64_t in = static_cast<int64_t>(e) % prob.stride_c();
    const bool inside = in / g.ldc < g.m && in % g.ldc < g.n;
    if (!inside) d.outside += got[e] != poison_bits(g.dtype);
    else d.wrong += got[e] != from_float(g.dtype, 2.0f * to_float(g.dtype, c0[e]));
  }
  return d;
}

TEST_F(Batched, KZeroScalesEveryProblem) {
  BatchedProblem prob(make_batched(DType::f16, kLayouts[0], 70, 90, 0, 7, Fill::small_int, 67000, 2.0f));
  prob.reset_outputs();
  TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), prob.describe());
  const Doubled d = check_doubled(prob);
  EXPECT_EQ(d.wrong, 0) << "elements of some C_i are not 2 * C_i: " << prob.describe();
  EXPECT_EQ(d.outside, 0) << "written between the C_i: " << prob.describe();
}

// More problems than a grid's z dimension holds (65535): the reference GEMM
// and the K == 0 scale stride over the batch in z, the kernels' raster walks
// batch x tiles in one index. Every problem and the guard rows between them
// are compared bit for bit with the reference; with K = 0 (where the
// reference is the same scale kernel) every C_i also against 2 * C_i on the host.
TEST_F(Batched, MoreProblemsThanAGridDimensionHolds) {
  for (const int64_t k : {int64_t{16}, int64_t{0}}) {
    BatchedProblem prob(make_batched(DType::bf16, kLayouts[0], 8, 8, k, 70000, Fill::small_int, 70100 + k, 2.0f));
    prob.reset_outputs();
    const std::string what = prob.describe();
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
    TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), what);
    EXPECT_EQ(differences(prob.download_all(prob.c()), prob.download_all(prob.c_ref())), 0) << what;
    if (k == 0) {
      const Doubled d = check_doubled(prob);
      EXPECT_EQ(d.wrong, 0) << "elements of some C_i are not 2 * C_i: " << what;
      EXPECT_EQ(d.outside, 0) << "written between the C_i: " << what;
    }
  }
}

// What tcgemm's kernel cannot take: a stride TMA cannot describe falls back
// to cuBLAS's strided batched GEMM (exact here, so equal to the reference),
// is refused under Prefer::tcgemm_only and with a fused epilogue; C matrices
// that overlap are refused always. A refused call writes nothing.
TEST_F(Batched, UnalignedStridesFallBackOrAreRefusedAndRefusalsWriteNothing) {
  BatchedCase bc = make_batched(DType::f16, kLayouts[0], 96, 80, 48, 4, Fill::small_int, 68000);
  BatchedProblem prob(bc);
  const GemmCase& g = prob.base();
  // C_1 starts 4 elements (8 bytes) later than 16-byte alignment would need:
  // the same buffer, one element row less of guard and a stride of
  // (M + 1) * ldc + 4. Still disjoint, still inside the allocation.
  GemmArgs call = prob.args(prob.c());
  call.stride_c = (g.m + 1) * g.ldc + 4;
  GemmArgs ref = prob.args(prob.c_ref());
  ref.stride_c = call.stride_c;
  prob.reset_outputs();
  TCGEMM_ASSERT_OK(run_reference(ref), "reference");
  const Plan fallback = run_gemm(call);
  TCGEMM_ASSERT_OK(fallback, "fallback");
  EXPECT_EQ(fallback.backend, Backend::cublas) << fallback.reason;
  EXPECT_EQ(fallback.kernel, "cublasGemmStridedBatchedEx");
  EXPECT_TRUE(contains(fallback.reason, "C: batch stride")) << fallback.reason;
  EXPECT_EQ(differences(prob.download_all(prob.c()), prob.download_all(prob.c_ref())), 0)
      << "cuBLAS's strided batch on exact inputs differs from the reference (or wrote outside the C_i)";

  const auto expect_untouched = [&](const char* what) {
    const std::vector<uint16_t> c = prob.download_all(prob.c());
    const int64_t written = std::count_if(c.begin(), c.end(), [&](uint16_t x) { return x != poison_bits(g.dtype); });
    EXPECT_EQ(written, 0) << what << ": a refused call wrote C";
  };
  Options only;
  only.prefer = Prefer::tcgemm_only;
  prob.reset_outputs();
  const Plan refused = run_gemm(call, only);
  EXPECT_EQ(refused.status, Status::unsupported) << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "batch stride")) << refused.reason;
  expect_untouched("tcgemm_only");

  GemmArgs fused = call;
  fused.activation = Activation::gelu;
  const Plan no_fuse = run_gemm(fused);
  EXPECT_EQ(no_fuse.status, Status::unsupported) << no_fuse.reason;
  EXPECT_TRUE(contains(no_fuse.reason, "cuBLAS cannot fuse")) << no_fuse.reason;
  expect_untouched("fused, unaligned stride");

  GemmArgs overlap = prob.args(prob.c());
  overlap.stride_c = g.ldc;  // C_1 starts on C_0's second row
  const Plan bad = run_gemm(overlap);
  EXPECT_EQ(bad.status, Status::invalid_argument) << bad.reason;
  EXPECT_TRUE(contains(bad.reason, "C matrices overlap")) << bad.reason;
  expect_untouched("overlapping C");

  GemmArgs no_batch = prob.args(prob.c());
  no_batch.batch = 0;  // an empty batch: nothing to write, as BLAS's batchCount = 0
  const Plan zero = run_gemm(no_batch);
  EXPECT_EQ(zero.status, Status::ok) << zero.reason;
  expect_untouched("batch 0");
  no_batch.batch = -2;
  const Plan negative = run_gemm(no_batch);
  EXPECT_EQ(negative.status, Status::invalid_argument) << negative.reason;
  expect_untouched("batch -2");
}

// The C ABI entry point runs the same batch as GemmArgs.
TEST_F(Batched, CApiMatchesTheCppCall) {
  BatchedProblem prob(make_batched(DType::bf16, kLayouts[2], 72, 136, 80, 9, Fill::small_int, 69000, 1.0f));
  prob.reset_outputs();
  const GemmArgs g = prob.args(prob.c_ref());
  TCGEMM_ASSERT_OK(run_gemm(g), prob.describe());
  const GemmArgs c = prob.args(prob.c());
  const int rc = tcgemm_gemm_strided_batched(1, static_cast<int>(c.op_a), static_cast<int>(c.op_b), c.m, c.n, c.k,
                                             c.alpha, c.a, c.lda, c.stride_a, c.b, c.ldb, c.stride_b, c.beta, c.c,
                                             c.ldc, c.stride_c, c.batch, nullptr);
  check_cuda(cudaDeviceSynchronize(), "tcgemm_gemm_strided_batched");
  ASSERT_EQ(rc, 0) << tcgemm_last_error();
  EXPECT_EQ(differences(prob.download_all(prob.c()), prob.download_all(prob.c_ref())), 0)
      << "the C ABI's batch differs from GemmArgs': " << prob.describe();
}

}  // namespace
}  // namespace tcgemm::test
