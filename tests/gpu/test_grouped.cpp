// The M-grouped GEMM (GemmArgs::groups): the rows of A and C in groups, each
// group with its own B, the group ends read on the device. Every row must
// come out bit for bit as a plain tcgemm call of its group alone gives it
// (random inputs), and as the grouped reference (small integers, every sum
// exact); rows past the last end, and guard rows past M, keep their poison;
// the ends are clamped on the device; a graph replays with new ends written
// by a kernel; what the kernels cannot take is refused with nothing written.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "support/elementwise.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.h"

namespace tcgemm::test {
namespace {

class Grouped : public GpuTest {};

using Buffer = support::DeviceBuffer<uint16_t>;

// One M-grouped problem: A (M x K, K-major), `groups` B matrices (op_b) packed
// one after another, C (M x N) with kGuardRows poisoned rows after it, and
// the group ends on the device.
struct GroupedProblem {
  DType dtype;
  Op op_b;
  int64_t m, n, k, ldc;
  std::vector<int32_t> ends;  // as given to the call (may be out of order or range)
  Fill fill;
  Buffer a, b, c, c_ref;
  support::DeviceBuffer<int32_t> ends_dev;

  GroupedProblem(DType dtype_, Op op_b_, int64_t m_, int64_t n_, int64_t k_, std::vector<int32_t> ends_, Fill fill_,
                 uint64_t seed)
      : dtype(dtype_), op_b(op_b_), m(m_), n(n_), k(k_), ldc(round_up(n_, 8)), ends(std::move(ends_)), fill(fill_) {
    const uint16_t poison = poison_bits(dtype);
    a = Buffer(static_cast<size_t>(std::max<int64_t>(m * lda(), 1)));
    b = Buffer(static_cast<size_t>(std::max<int64_t>(stride_b() * groups(), 1)));
    fill_bits(a.data(), a.size(), poison);
    fill_bits(b.data(), b.size(), poison);
    if (k > 0) {
      support::fill_random(dtype, a.data(), m, k, lda(), distribution(fill), seed * 10 + 1, poison);
      for (int64_t g = 0; g < groups(); ++g)
        support::fill_random(dtype, b.data() + g * stride_b(), op_b == Op::T ? n : k, op_b == Op::T ? k : n, ldb(),
                             distribution(fill), seed * 10 + 2 + static_cast<uint64_t>(g) * 7, poison);
    }
    c = Buffer(c_span());
    c_ref = Buffer(c_span());
    poison_outputs();
    ends_dev = support::DeviceBuffer<int32_t>(std::max<size_t>(ends.size(), 1));
    check_cuda(cudaMemcpy(ends_dev.data(), ends.data(), ends.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
               "copying the group ends");
  }

  int64_t groups() const { return static_cast<int64_t>(ends.size()); }
  int64_t lda() const { return std::max<int64_t>(round_up(k, 8), 8); }
  int64_t ldb() const { return std::max<int64_t>(op_b == Op::T ? round_up(k, 8) : round_up(n, 8), 8); }
  int64_t stride_b() const { return (op_b == Op::T ? n : k) * ldb(); }
  size_t c_span() const { return static_cast<size_t>((m + kGuardRows) * ldc); }
  void poison_outputs() const {
    fill_bits(c.data(), c.size(), poison_bits(dtype));
    fill_bits(c_ref.data(), c_ref.size(), poison_bits(dtype));
    check_cuda(cudaDeviceSynchronize(), "poisoning C");
  }

  // Group g's rows as the device clamps them (common/m_groups.hpp).
  int64_t end(int64_t g) const { return std::clamp<int64_t>(ends[static_cast<size_t>(g)], 0, m); }
  int64_t start(int64_t g) const { return g == 0 ? 0 : end(g - 1); }

  std::string describe() const {
    std::string s = std::string("dtype=") + to_string(dtype) + " layout=N" + to_string(op_b) + " m=" +
                    std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " fill=" +
                    to_string(fill) + " ends=";
    for (size_t g = 0; g < ends.size(); ++g) {
      if (g > 0) s += ',';
      s += std::to_string(ends[g]);
    }
    return s;
  }

  // The grouped call writing into `out`.
  GemmArgs args(uint16_t* out, cudaStream_t stream = nullptr) const {
    GemmArgs g;
    g.dtype = dtype;
    g.op_a = Op::N;
    g.op_b = op_b;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a.data();
    g.lda = lda();
    g.b = b.data();
    g.ldb = ldb();
    g.stride_b = stride_b();
    g.c = out;
    g.ldc = ldc;
    g.group_ends = ends_dev.data();
    g.groups = groups();
    g.stream = stream;
    return g;
  }
  // Group g alone, a plain call on its rows, writing into `out`'s rows.
  GemmArgs single(int64_t g, uint16_t* out) const {
    GemmArgs s = args(out);
    s.group_ends = nullptr;
    s.groups = 0;
    s.stride_b = 0;
    s.m = end(g) - start(g);
    s.a = a.data() + start(g) * lda();
    s.b = b.data() + g * stride_b();
    s.c = out + start(g) * ldc;
    return s;
  }
};

// Rows of C in no group (at or past the last end), as the device clamps.
int64_t rows_in_groups(const GroupedProblem& p) {
  int64_t last = 0;
  for (int64_t g = 0; g < p.groups(); ++g) last = std::max(last, p.end(g));
  return last;
}

// `got` against `want` over the rows in groups, bit for bit, and every other
// element (rows past the groups, guard rows, padding columns) still poisoned.
void expect_grouped_identical(const GroupedProblem& p, const std::vector<uint16_t>& got,
                              const std::vector<uint16_t>& want, const std::string& what) {
  const int64_t rows = rows_in_groups(p);
  const uint16_t poison = poison_bits(p.dtype);
  int64_t mismatches = 0, outside = 0, nonzero = 0;
  std::string first;
  for (int64_t r = 0; r < p.m + kGuardRows; ++r)
    for (int64_t col = 0; col < p.ldc; ++col) {
      const size_t e = static_cast<size_t>(r * p.ldc + col);
      if (r < rows && col < p.n) {
        if (got[e] != want[e] && mismatches++ == 0)
          first = "C[" + std::to_string(r) + "," + std::to_string(col) + "]: got " +
                  std::to_string(to_float(p.dtype, got[e])) + ", want " + std::to_string(to_float(p.dtype, want[e]));
        // (Finite and non-zero: a reference still holding its NaN poison is no reference.)
        const float w = to_float(p.dtype, want[e]);
        nonzero += std::isfinite(w) && w != 0.0f;
      } else if (got[e] != poison && outside++ == 0) {
        first += " written outside the groups: C[" + std::to_string(r) + "," + std::to_string(col) + "]";
      }
    }
  EXPECT_EQ(mismatches, 0) << what << " " << p.describe() << ": " << first;
  EXPECT_EQ(outside, 0) << what << " " << p.describe() << ": " << first;
  if (rows * p.n > 0) {
    EXPECT_GT(nonzero, rows * p.n / 2) << what << " " << p.describe() << ": a reference of zeros";
  }
}

// The grouped call (options) against a plain call per group, and, on small
// integers, against the grouped reference.
void expect_grouped_correct(GroupedProblem& p, const Options& options, const std::string& what,
                            const support::KernelVariant* forced = nullptr) {
  p.poison_outputs();
  const Plan plan = run_gemm(p.args(p.c.data()), options);
  TCGEMM_ASSERT_OK(plan, what + " " + p.describe());
  EXPECT_EQ(plan.backend, own_backend());
  EXPECT_NE(plan.kernel.find("M-grouped"), std::string::npos) << plan.kernel;
  if (forced != nullptr) expect_ran(plan, *forced, what + " " + p.describe());
  const std::vector<uint16_t> got = download(p.c.data(), p.c_span());
  for (int64_t g = 0; g < p.groups(); ++g) {
    if (p.end(g) <= p.start(g)) continue;
    // Random inputs: the group's rows of the grouped result against a
    // float64 reference, element by element (the plain call below runs the
    // same mainloop and epilogue code: an error both make would pass it).
    if (p.fill != Fill::small_int) {
      const support::ElementwiseStats st = support::check_elementwise(p.single(g, p.c.data()), nullptr);
      EXPECT_EQ(st.nonfinite, 0) << what << " " << p.describe() << " group " << g;
      EXPECT_EQ(st.beyond, 0) << what << " " << p.describe() << " group " << g << ": " << st.first.str();
    }
    // The group alone, a plain tcgemm call (the same kernels' bits: rows do
    // not depend on the problem they are computed in).
    const Plan single = run_gemm(p.single(g, p.c_ref.data()));
    TCGEMM_ASSERT_OK(single, "group " + std::to_string(g) + " alone");
  }
  expect_grouped_identical(p, got, download(p.c_ref.data(), p.c_span()), what + " vs a plain call per group");
  if (p.fill == Fill::small_int) {
    fill_bits(p.c_ref.data(), p.c_ref.size(), poison_bits(p.dtype));
    const Plan ref = run_reference(p.args(p.c_ref.data()));
    TCGEMM_ASSERT_OK(ref, "the grouped reference");
    expect_grouped_identical(p, got, download(p.c_ref.data(), p.c_span()), what + " vs the grouped reference");
  }
}

// Every configuration this device's family builds for M-grouped calls,
// each checked to be the one that ran.
void expect_every_grouped_configuration_correct(GroupedProblem& p) {
  for (const support::KernelVariant& v : support::grouped_variants(own_backend()))
    expect_grouped_correct(p, v.options, "forced " + v.label, &v);
}

std::vector<int32_t> ends_of(const std::vector<int32_t>& sizes) {
  std::vector<int32_t> ends(sizes.size());
  std::partial_sum(sizes.begin(), sizes.end(), ends.begin());
  return ends;
}

TEST_F(Grouped, EveryRowAsAPlainCallOfItsGroup) {
  // Empty groups, one row, a tile's worth, past a tile, and rows past the
  // last end (M is larger than the groups' sum by 3).
  const std::vector<std::vector<int32_t>> patterns = {
      {0, 1, 130, 64, 0, 257, 5}, {200}, {1, 2, 3, 4, 5, 6, 7, 8}, {129, 0, 0, 63, 65}};
  uint64_t seed = 1;
  for (DType dtype : {DType::bf16, DType::f16})
    for (Op op_b : {Op::T, Op::N})
      for (const auto& sizes : patterns)
        for (Fill fill : {Fill::uniform_pm1, Fill::small_int}) {
          const std::vector<int32_t> ends = ends_of(sizes);
          GroupedProblem p(dtype, op_b, ends.back() + 3, 200, 136, ends, fill, seed++);
          expect_grouped_correct(p, Options{}, "automatic");
          expect_every_grouped_configuration_correct(p);
        }
}

TEST_F(Grouped, ManyGroupsOfRandomSizes) {
  std::mt19937 rng(7);
  for (int64_t groups : {37, 256}) {
    std::vector<int32_t> sizes(static_cast<size_t>(groups));
    for (auto& s : sizes) s = static_cast<int32_t>(rng() % 90);
    const std::vector<int32_t> ends = ends_of(sizes);
    GroupedProblem p(DType::bf16, Op::T, ends.back(), 256, 256, ends, Fill::uniform_pm1, 40 + groups);
    expect_grouped_correct(p, Options{}, "automatic");
    expect_every_grouped_configuration_correct(p);
  }
}

TEST_F(Grouped, EndsAreClampedOnTheDevice) {
  // Below 0 (an empty first group), an empty group, past M (clamped to M).
  GroupedProblem p(DType::f16, Op::T, 150, 96, 64, {-5, 10, 10, 1000000}, Fill::small_int, 3);
  expect_grouped_correct(p, Options{}, "clamped ends");
}

TEST_F(Grouped, DecreasingEndsWriteNothing) {
  // Groups that would overlap once clamped: the kernel (and the reference,
  // and the K = 0 scale) leave every row of C as it was.
  for (int64_t k : {64, 0}) {
    GroupedProblem p(DType::bf16, Op::T, 120, 64, k, {50, 20, 90}, Fill::uniform_pm1, 9);
    for (bool reference : {false, true}) {
      p.poison_outputs();
      const Plan plan = reference ? run_reference(p.args(p.c.data())) : run_gemm(p.args(p.c.data()));
      TCGEMM_ASSERT_OK(plan, "decreasing ends");
      const std::vector<uint16_t> c = download(p.c.data(), p.c_span());
      EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](uint16_t x) { return x == poison_bits(p.dtype); }))
          << (reference ? "the reference" : plan.kernel) << " wrote C with K = " << k;
    }
  }
}

TEST_F(Grouped, KZeroScalesTheRowsOfTheGroups) {
  GroupedProblem p(DType::bf16, Op::T, 40, 24, 0, {10, 30}, Fill::small_int, 4);
  // C = beta * C on rows 0-29; rows 30-39 (in no group) untouched.
  std::vector<uint16_t> host(p.c_span(), poison_bits(p.dtype));
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t col = 0; col < p.n; ++col)
      host[static_cast<size_t>(r * p.ldc + col)] = from_float(p.dtype, static_cast<float>((r + col) % 5));
  check_cuda(cudaMemcpy(p.c.data(), host.data(), host.size() * 2, cudaMemcpyHostToDevice), "filling C");
  GemmArgs args = p.args(p.c.data());
  args.beta = 2.0f;
  TCGEMM_ASSERT_OK(run_gemm(args), "K = 0");
  const std::vector<uint16_t> got = download(p.c.data(), p.c_span());
  for (int64_t r = 0; r < p.m; ++r)
    for (int64_t col = 0; col < p.n; ++col) {
      const float c0 = static_cast<float>((r + col) % 5);
      ASSERT_EQ(to_float(p.dtype, got[static_cast<size_t>(r * p.ldc + col)]), r < 30 ? 2.0f * c0 : c0)
          << "C[" << r << "," << col << "]";
    }
}

TEST_F(Grouped, AGraphReplaysWithEndsWrittenOnTheDevice) {
  // The ends reach the kernel by a device copy captured in the same graph:
  // replaying after new ends are put in the source gives the new grouping,
  // with no host step in between.
  GroupedProblem p(DType::bf16, Op::N, 300, 128, 128, {100, 300}, Fill::small_int, 5);
  support::DeviceBuffer<int32_t> source(2);
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "begin capture");
  check_cuda(cudaMemcpyAsync(p.ends_dev.data(), source.data(), 2 * sizeof(int32_t), cudaMemcpyDeviceToDevice, stream),
             "captured copy");
  const Plan captured = gemm(p.args(p.c.data(), stream));
  check_cuda(cudaStreamEndCapture(stream, &graph), "end capture");
  TCGEMM_ASSERT_OK(captured, "captured grouped call");
  check_cuda(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  for (const std::vector<int32_t>& ends : {std::vector<int32_t>{100, 300}, std::vector<int32_t>{250, 260}}) {
    p.ends = ends;
    check_cuda(cudaMemcpy(source.data(), ends.data(), 2 * sizeof(int32_t), cudaMemcpyHostToDevice), "new ends");
    p.poison_outputs();
    check_cuda(cudaGraphLaunch(exec, stream), "replay");
    check_cuda(cudaStreamSynchronize(stream), "replay");
    const std::vector<uint16_t> got = download(p.c.data(), p.c_span());
    for (int64_t g = 0; g < p.groups(); ++g) TCGEMM_ASSERT_OK(run_gemm(p.single(g, p.c_ref.data())), "alone");
    expect_grouped_identical(p, got, download(p.c_ref.data(), p.c_span()),
                             "replayed with ends " + std::to_string(ends[0]) + "," + std::to_string(ends[1]));
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

TEST_F(Grouped, RefusedWithNothingWritten) {
  GroupedProblem p(DType::bf16, Op::T, 64, 64, 64, {32, 64}, Fill::uniform_pm1, 6);
  struct Refusal {
    std::string what, says;
    GemmArgs args;
    Options options;
  };
  std::vector<Refusal> cases;
  auto add = [&](std::string what, std::string says, auto edit, Options o = {}) {
    GemmArgs a = p.args(p.c.data());
    edit(a);
    cases.push_back({std::move(what), std::move(says), a, o});
  };
  add("too many groups", "at most 256 groups", [](GemmArgs& a) { a.groups = 257; });
  add("A stored M-major", "op_a = N", [](GemmArgs& a) { a.op_a = Op::T; });
  add("also batched", "batch must be 1", [](GemmArgs& a) { a.batch = 2; });
  add("a bias", "no fused epilogue", [&](GemmArgs& a) { a.bias = p.b.data(); });
  add("no ends", "group_ends is a null pointer", [](GemmArgs& a) { a.group_ends = nullptr; });
  add("ends in host memory", "group_ends", [&](GemmArgs& a) { a.group_ends = p.ends.data(); });
  add("negative stride_b", "stride_b must not be negative", [](GemmArgs& a) { a.stride_b = -8; });
  Options cublas;
  cublas.prefer = Prefer::cublas_only;
  add("cuBLAS asked for", "tcgemm's kernels only", [](GemmArgs&) {}, cublas);
  Options narrow;
  narrow.block_n = 64;
  const bool sm100 = own_backend() == Backend::sm100;
  add("a configuration not built for groups", sm100 ? "kSm100GroupedWidths" : "kGroupedTileConfigs", [](GemmArgs&) {},
      narrow);
  Options pair;
  pair.block_n = 128;
  pair.cluster_m = 2;
  add("a cluster", sm100 ? "single-CTA" : "without clusters", [](GemmArgs&) {}, pair);
  for (const Refusal& r : cases) {
    p.poison_outputs();
    const Plan plan = run_gemm(r.args, r.options);
    EXPECT_NE(plan.status, Status::ok) << r.what;
    EXPECT_NE(plan.reason.find(r.says), std::string::npos) << r.what << ": " << plan.reason;
    const std::vector<uint16_t> c = download(p.c.data(), p.c_span());
    EXPECT_TRUE(std::all_of(c.begin(), c.end(), [&](uint16_t x) { return x == poison_bits(p.dtype); }))
        << r.what << ": C was written";
  }
  // The C ABI says the same, with the reason kept.
  const int rc = tcgemm_gemm_m_grouped(1, 1, 64, 64, 64, 1.0f, p.a.data(), 64, p.b.data(), 64, 64 * 64, 0.0f,
                                       p.c.data(), 64, p.ends_dev.data(), -1, nullptr);
  EXPECT_EQ(rc, static_cast<int>(Status::invalid_argument));
  EXPECT_NE(std::string(tcgemm_last_error()).find("groups must not be negative"), std::string::npos)
      << tcgemm_last_error();
}

TEST_F(Grouped, TheCAbiRunsTheCall) {
  GroupedProblem p(DType::f16, Op::N, 100, 72, 40, {30, 30, 99}, Fill::small_int, 8);
  p.poison_outputs();
  const int rc = tcgemm_gemm_m_grouped(0, 0, p.m, p.n, p.k, 1.0f, p.a.data(), p.lda(), p.b.data(), p.ldb(),
                                       p.stride_b(), 0.0f, p.c.data(), p.ldc, p.ends_dev.data(), p.groups(), nullptr);
  ASSERT_EQ(rc, 0) << tcgemm_last_error();
  check_cuda(cudaDeviceSynchronize(), "the C ABI call");
  TCGEMM_ASSERT_OK(run_reference(p.args(p.c_ref.data())), "reference");
  expect_grouped_identical(p, download(p.c.data(), p.c_span()), download(p.c_ref.data(), p.c_span()), "C ABI");
}

}  // namespace
}  // namespace tcgemm::test
