#include "gemm_case.hpp"

#include "support/compare.hpp"
#include "support/elementwise.hpp"
#include "support/kernel_variants.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace tcgemm::test {

// ---------------------------------------------------------------------------
// Device requirements
// ---------------------------------------------------------------------------

const std::string& gpu_skip_reason() {
  static const std::string reason = [] {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
    }
    if (count == 0) return std::string("no CUDA device is visible");
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
      cudaGetLastError();
      return std::string("cannot query the current CUDA device");
    }
    if (support::device_family(dev) == Backend::none) {
      return "device " + std::to_string(dev) + " (" + prop.name + ") has compute capability " +
             std::to_string(prop.major) + "." + std::to_string(prop.minor) +
             "; these tests need 9.0 or 10.0, which tcgemm's kernel families are written for";
    }
    return std::string();
  }();
  return reason;
}

// A device of a family this build lacks (a 100a-only build on an H200):
// not a skip but a failure, for every call there would go to cuBLAS and
// nothing of tcgemm's kernels would be tested.
const std::string& gpu_fail_reason() {
  static const std::string reason = [] {
    int dev = 0;
    if (!gpu_skip_reason().empty() || cudaGetDevice(&dev) != cudaSuccess) return std::string();
    const Backend family = support::device_family(dev);
    if (support::family_built(family)) return std::string();
    return "device " + std::to_string(dev) + " runs the " + to_string(family) + " kernels, which this build (" +
           build_info().cuda_archs + ") lacks: rebuild with TCGEMM_CUDA_ARCHS including its architecture";
  }();
  return reason;
}

void GpuTest::SetUp() {
  if (!gpu_skip_reason().empty()) GTEST_SKIP() << gpu_skip_reason();
  if (!gpu_fail_reason().empty()) GTEST_FAIL() << gpu_fail_reason();
}

Backend own_backend() { return support::device_family(); }

int device_sm_count() {
  int dev = 0, sms = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  return sms;
}

namespace {
// Prints one marker line when the whole suite will skip, so ctest can report
// the suite as skipped (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt).
class SkipMarker : public ::testing::Environment {
 public:
  void SetUp() override {
    if (!gpu_skip_reason().empty()) std::printf("TCGEMM_GPU_TESTS_SKIPPED: %s\n", gpu_skip_reason().c_str());
  }
};
[[maybe_unused]] ::testing::Environment* const g_skip_marker = ::testing::AddGlobalTestEnvironment(new SkipMarker);
}  // namespace

// ---------------------------------------------------------------------------
// Cases and buffers
// ---------------------------------------------------------------------------

const char* to_string(Fill fill) {
  switch (fill) {
    case Fill::uniform_pm1:
      return "uniform(-1,1)";
    case Fill::uniform_01:
      return "uniform(0,1)";
    case Fill::small_int:
      return "int[-2,2]";
  }
  return "?";
}

support::Distribution distribution(Fill fill) {
  switch (fill) {
    case Fill::uniform_pm1:
      return support::uniform(-1.0f, 1.0f);
    case Fill::uniform_01:
      return support::uniform(0.0f, 1.0f);
    case Fill::small_int:
      return support::integers(-2, 2);
  }
  return support::uniform(-1.0f, 1.0f);
}

std::string layout_name(Layout layout) { return std::string(to_string(layout.a)) + to_string(layout.b); }

std::string GemmCase::describe() const {
  std::ostringstream s;
  s << "m=" << m << " n=" << n << " k=" << k << " dtype=" << to_string(dtype) << " layout=" << to_string(op_a)
    << to_string(op_b) << " lda=" << lda << " ldb=" << ldb << " ldc=" << ldc;
  if (offset_a != 0 || offset_b != 0 || offset_c != 0)
    s << " offset_a=" << offset_a << " offset_b=" << offset_b << " offset_c=" << offset_c;
  s << " alpha=" << alpha << " beta=" << beta << " fill=" << to_string(fill) << " seed=" << seed;
  return s.str();
}

GemmCase make_case(DType dtype, Layout layout, int64_t m, int64_t n, int64_t k, Fill fill, uint64_t seed, int64_t pad) {
  auto ld = [pad](int64_t cols) { return std::max<int64_t>(round_up(cols, 8), 8) + pad; };
  GemmCase c;
  c.dtype = dtype;
  c.op_a = layout.a;
  c.op_b = layout.b;
  c.m = m;
  c.n = n;
  c.k = k;
  c.lda = ld(layout.a == Op::N ? k : m);
  c.ldb = ld(layout.b == Op::N ? n : k);
  c.ldc = ld(n);
  c.fill = fill;
  c.seed = seed;
  return c;
}

namespace {
// Distinct streams of random numbers for A, B and C from one printed seed.
uint64_t seed_a(uint64_t s) { return s * 3 + 1; }
uint64_t seed_b(uint64_t s) { return s * 3 + 2; }

void fill_operand(const char* name, DType dtype, uint16_t* p, int64_t rows, int64_t cols, int64_t ld, Fill fill,
                  uint64_t seed, const GemmCase& gc) {
  support::fill_random(dtype, p, rows, cols, ld, distribution(fill), seed, poison_bits(dtype));
  if (rows * cols == 0) return;
  // Never test on zeros: a kernel that reads nothing must not pass.
  const support::ValueStats v = support::value_stats(dtype, p, rows, cols, ld);
  if (!v.usable_input()) {
    throw std::runtime_error(std::string("input ") + name + " has " + std::to_string(v.nonzero) + " non-zero and " +
                             std::to_string(v.nonfinite) + " NaN of " + std::to_string(rows * cols) + " elements (" +
                             gc.describe() + ")");
  }
}

// The fills only enqueue work: wait, so a fault throws here, naming what
// was being written, and a GEMM on a non-blocking stream sees the data.
void wait_for_fills(const char* what) { check_cuda(cudaDeviceSynchronize(), what); }
}  // namespace

namespace {
// Rows x columns of A and B as stored (row-major).
struct StoredShapes {
  int64_t rows_a, cols_a, rows_b, cols_b;
};
StoredShapes stored_shapes(const GemmCase& gc) {
  return {gc.op_a == Op::N ? gc.m : gc.k, gc.op_a == Op::N ? gc.k : gc.m, gc.op_b == Op::N ? gc.k : gc.n,
          gc.op_b == Op::N ? gc.n : gc.k};
}
}  // namespace

Problem::Problem(const GemmCase& gc) : case_(gc) {
  const StoredShapes s = stored_shapes(gc);
  a_ = Buffer(static_cast<size_t>(gc.offset_a + std::max<int64_t>(s.rows_a * gc.lda, 1)));
  b_ = Buffer(static_cast<size_t>(gc.offset_b + std::max<int64_t>(s.rows_b * gc.ldb, 1)));
  const size_t c_elems = static_cast<size_t>(gc.offset_c) + c_span();
  c_ = Buffer(c_elems);
  c_ref_ = Buffer(c_elems);
  fill_bits(a_.data(), a_.size(), poison_bits(gc.dtype));
  fill_bits(b_.data(), b_.size(), poison_bits(gc.dtype));
  refill_inputs(gc.seed);
  poison_outputs();
}

void Problem::refill_inputs(uint64_t seed) const {
  const GemmCase& gc = case_;
  const StoredShapes s = stored_shapes(gc);
  fill_operand("A", gc.dtype, a(), s.rows_a, s.cols_a, gc.lda, gc.fill, seed_a(seed), gc);
  fill_operand("B", gc.dtype, b(), s.rows_b, s.cols_b, gc.ldb, gc.fill, seed_b(seed), gc);
  wait_for_fills("filling A and B");
}

GemmArgs GemmCase::args(const void* a, const void* b, void* c, cudaStream_t stream) const {
  GemmArgs g;
  g.dtype = dtype;
  g.op_a = op_a;
  g.op_b = op_b;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = alpha;
  g.a = a;
  g.lda = lda;
  g.b = b;
  g.ldb = ldb;
  g.beta = beta;
  g.c = c;
  g.ldc = ldc;
  g.stream = stream;
  return g;
}

GemmArgs Problem::args(uint16_t* c, cudaStream_t stream) const { return case_.args(a(), b(), c, stream); }

void Problem::poison_outputs() const {
  fill_bits(c_.data(), c_.size(), poison_bits(case_.dtype));
  fill_bits(c_ref_.data(), c_ref_.size(), poison_bits(case_.dtype));
  wait_for_fills("poisoning C");
}

void Problem::poison_c() const {
  fill_bits(c_.data(), c_.size(), poison_bits(case_.dtype));
  wait_for_fills("poisoning C");
}

void Problem::fill_outputs(Fill fill, uint64_t seed) {
  poison_outputs();
  if (c0_.size() == 0) c0_ = Buffer(c_.size());
  for (uint16_t* c : {this->c(), c_ref(), c0()})
    support::fill_random(case_.dtype, c, case_.m, case_.n, case_.ldc, distribution(fill), seed,
                         poison_bits(case_.dtype));
  wait_for_fills("filling C");
}

Plan run_gemm(const GemmArgs& args, const Options& options) {
  const Plan p = gemm(args, options);
  check_cuda(cudaStreamSynchronize(args.stream), "tcgemm::gemm (kernel " + p.kernel + ")");
  check_cuda(cudaGetLastError(), "tcgemm::gemm (kernel " + p.kernel + ")");
  return p;
}

Plan run_reference(const GemmArgs& args) {
  const Plan p = reference_gemm(args);
  check_cuda(cudaStreamSynchronize(args.stream), "tcgemm::reference_gemm");
  check_cuda(cudaGetLastError(), "tcgemm::reference_gemm");
  return p;
}

// ---------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------

namespace {
std::string element(DType dtype, const char* label, int64_t r, int64_t c, uint16_t got, uint16_t want) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s[%lld,%lld]: got %.8g (0x%04x), want %.8g (0x%04x)", label,
                static_cast<long long>(r), static_cast<long long>(c), static_cast<double>(to_float(dtype, got)), got,
                static_cast<double>(to_float(dtype, want)), want);
  return buf;
}
}  // namespace

Comparison compare(DType dtype, const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, uint16_t outside,
                   int64_t m, int64_t n, int64_t ldc) {
  Comparison out;
  const int64_t rows = m + kGuardRows;
  if (static_cast<int64_t>(got.size()) < rows * ldc || static_cast<int64_t>(want.size()) < rows * ldc)
    throw std::runtime_error("compare: buffers are smaller than (m + guard rows) * ldc");
  out.elements = m * n;

  // Pass 1: everything but the elementwise bound, which needs rms(want).
  double sum_diff2 = 0.0, sum_want2 = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < ldc; ++c) {
      const size_t i = static_cast<size_t>(r * ldc + c);
      if (r >= m || c >= n) {
        if (got[i] != outside && out.outside_changed++ == 0)
          out.first_outside = element(dtype, "outside C", r, c, got[i], outside);
        continue;
      }
      const bool got_bad = is_nan_or_inf(dtype, got[i]), want_bad = is_nan_or_inf(dtype, want[i]);
      out.nan += got_bad;
      out.ref_nan += want_bad;
      out.ref_nonzero += support::is_nonzero(want[i]);
      if (got[i] != want[i] && out.bit_mismatches++ == 0)
        out.first_mismatch = element(dtype, "C", r, c, got[i], want[i]);
      if (got_bad || want_bad) continue;
      const double g = to_float(dtype, got[i]), w = to_float(dtype, want[i]);
      sum_diff2 += (g - w) * (g - w);
      sum_want2 += w * w;
      out.max_abs = std::max(out.max_abs, std::fabs(g - w));
    }
  out.rel_fro = sum_want2 > 0.0 ? std::sqrt(sum_diff2 / sum_want2) : (sum_diff2 > 0.0 ? INFINITY : 0.0);

  // Pass 2: |got - want| <= 4u (|want| + rms(want)). Two results that differ
  // only in the order of fp32 additions round to within one output ulp
  // (2u |want|); the rms term covers elements near zero after cancellation.
  // A skipped k16 step moves an element by ~sqrt(16) rms(products): far out.
  const double u = support::unit_roundoff(dtype);
  const double rms = out.elements > 0 ? std::sqrt(sum_want2 / static_cast<double>(out.elements)) : 0.0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r * ldc + c);
      if (is_nan_or_inf(dtype, got[i]) || is_nan_or_inf(dtype, want[i])) continue;  // counted above
      const double g = to_float(dtype, got[i]), w = to_float(dtype, want[i]);
      if (std::fabs(g - w) > 4.0 * u * (std::fabs(w) + rms) && out.beyond_bound++ == 0)
        out.first_beyond = element(dtype, "C", r, c, got[i], want[i]);
    }
  return out;
}

std::string Comparison::summary() const {
  std::ostringstream s;
  s << "elements=" << elements << " rel_fro=" << rel_fro << " max_abs=" << max_abs << " nan=" << nan
    << " bit_mismatches=" << bit_mismatches << " beyond_bound=" << beyond_bound
    << " outside_changed=" << outside_changed << " ref_nan=" << ref_nan << " ref_nonzero=" << ref_nonzero;
  if (!first_mismatch.empty()) s << "; first mismatch " << first_mismatch;
  if (!first_beyond.empty()) s << "; first beyond bound " << first_beyond;
  if (!first_outside.empty()) s << "; first write outside M x N " << first_outside;
  return s.str();
}

namespace {
void expect_sane_reference(const Comparison& c, const std::string& what, double min_nonzero = 0.5) {
  EXPECT_EQ(c.ref_nan, 0) << "the reference has NaN/Inf: " << what << "\n  " << c.summary();
  EXPECT_GE(static_cast<double>(c.ref_nonzero), min_nonzero * static_cast<double>(c.elements))
      << "the reference is mostly zero, the test would prove nothing: " << what << "\n  " << c.summary();
}
}  // namespace

void expect_close(const Comparison& c, DType dtype, const std::string& what) {
  expect_sane_reference(c, what);
  const double tol = support::normwise_tolerance(dtype);
  EXPECT_EQ(c.nan, 0) << "NaN/Inf in C (an unwritten tile keeps its NaN poison): " << what << "\n  " << c.summary();
  EXPECT_LT(c.rel_fro, tol) << "normwise relative error: " << what << "\n  " << c.summary();
  EXPECT_EQ(c.beyond_bound, 0) << "elementwise bound: " << what << "\n  " << c.summary();
  EXPECT_EQ(c.outside_changed, 0) << "C written outside M x N: " << what << "\n  " << c.summary();
}

void expect_identical(const Comparison& c, const std::string& what, double min_nonzero) {
  expect_sane_reference(c, what, min_nonzero);
  EXPECT_EQ(c.nan, 0) << "NaN/Inf in C: " << what << "\n  " << c.summary();
  EXPECT_EQ(c.bit_mismatches, 0) << "not bit-identical: " << what << "\n  " << c.summary();
  EXPECT_EQ(c.outside_changed, 0) << "C written outside M x N: " << what << "\n  " << c.summary();
}

void expect_ran(const Plan& plan, const support::KernelVariant& v, const std::string& what) {
  const std::string ran = what + " " + v.label + ": ran " + plan.kernel + " (" + plan.reason + ")";
  EXPECT_EQ(plan.backend, own_backend()) << ran;
  EXPECT_EQ(plan.path, Path::kernel) << ran;
  for (const std::string& part : v.in_name) EXPECT_TRUE(contains(plan.kernel, part)) << ran;
  for (const std::string& part : v.not_in_name) EXPECT_FALSE(contains(plan.kernel, part)) << ran;
  EXPECT_EQ(plan.config.block_n, v.options.block_n) << ran;
  EXPECT_EQ(plan.config.swap_ab, v.options.swap_ab) << ran;
}

void expect_within_bound(const Problem& prob, Backend backend, const std::string& what) {
  const GemmCase& gc = prob.gemm_case();
  if (gc.beta != 0.0f && prob.c0() == nullptr)
    throw std::runtime_error("expect_within_bound: beta != 0 needs C0 from fill_outputs() (" + gc.describe() + ")");
  const support::ElementwiseStats ew =
      support::check_elementwise(prob.args(prob.c()), gc.beta != 0.0f ? prob.c0() : nullptr);
  if (backend == Backend::cublas)
    EXPECT_EQ(ew.beyond_rounded_twice, 0)
        << "element-wise bound, alpha*AB rounded twice allowed (cuBLAS fallback): " << what << "\n  worst |c - ref| / "
        << "bound " << ew.worst_rounded_twice << "; first " << ew.first_rounded_twice.str();
  else
    EXPECT_EQ(ew.beyond, 0) << "element-wise bound against the float64 reference: " << what
                            << "\n  worst |c - ref| / bound " << ew.worst << "; first " << ew.first.str();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string run_child(const std::string& cmd, int* status) {
  FILE* child = popen(cmd.c_str(), "r");
  if (child == nullptr) {
    *status = -1;
    return {};
  }
  std::string output;
  char buf[512];
  while (std::fgets(buf, sizeof buf, child) != nullptr) output += buf;
  *status = pclose(child);
  return output;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

bool mentions_alignment(const std::string& reason) {
  const std::string r = lower(reason);
  return contains(r, "align") || contains(r, "multiple of 8") || contains(r, "multiple of 16");
}

void expect_correct(const Problem& prob, const Plan& plan, const std::string& what) {
  const GemmCase& gc = prob.gemm_case();
  const Comparison cmp =
      compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc);
  const std::string label = what + " kernel " + plan.kernel;
  if (gc.fill == Fill::small_int) {
    expect_identical(cmp, label);
  } else {
    expect_close(cmp, gc.dtype, label);
    expect_within_bound(prob, plan.backend, label);
  }
}

}  // namespace tcgemm::test
