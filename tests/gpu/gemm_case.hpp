// One GEMM test case: its description (printed with every failure), its
// buffers on the device, runs of tcgemm and of the reference, and the
// comparisons the suites assert on.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/cuda_error.hpp"
#include "support/device_buffer.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::test {

// The suites name these unqualified. Every helper throws on a CUDA error
// (support::CudaError is a std::runtime_error), so a failure inside one
// fails the test that called it with the CUDA error named.
using support::check_cuda;
using support::download;
using support::fill_bits;
using support::from_float;
using support::is_nan_or_inf;
using support::poison_bits;
using support::to_float;

// What to fill inputs with.
//   uniform_pm1: uniform in (-1, 1), rounded to the dtype: numeric mode.
//   uniform_01:  uniform in [0, 1), as matmul_v2's inputs (torch uniform_).
//   small_int:   integers in [-2, 2]: every product and partial sum is exact
//                in fp32, so any correct kernel equals the reference bit for bit.
enum class Fill { uniform_pm1, uniform_01, small_int };
const char* to_string(Fill fill);
support::Distribution distribution(Fill fill);

// Every GPU test derives from this: it skips, with the reason, unless the
// current device is one a kernel family is written for: compute capability
// 9.0 (sm90) or 10.0 (sm100); and it fails where that family is not in this
// build (90a, 100a): then nothing of tcgemm's kernels could be tested.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
};

// Empty when the current device can run the tests, else why not.
const std::string& gpu_skip_reason();
// Empty unless the device's kernel family is missing from this build.
const std::string& gpu_fail_reason();
int device_sm_count();
// The backend tcgemm's own kernel reports on this device: Backend::sm90 or
// Backend::sm100 (support::device_family).
Backend own_backend();

// The four storage layouts, in the order NN, NT, TN, TT.
struct Layout {
  Op a, b;
};
inline constexpr Layout kLayouts[] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
std::string layout_name(Layout layout);

struct GemmCase {
  DType dtype = DType::f16;
  Op op_a = Op::N, op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  // Elements between the start of each allocation and the operand: 0 keeps
  // the 256-byte alignment of cudaMalloc, 1 misaligns the base for TMA.
  int64_t offset_a = 0, offset_b = 0, offset_c = 0;
  float alpha = 1.0f, beta = 0.0f;
  Fill fill = Fill::uniform_pm1;
  uint64_t seed = 0;

  // "m=129 n=257 k=65 dtype=f16 layout=NT lda=72 ldb=72 ldc=264 fill=int[-2,2] seed=17 ..."
  std::string describe() const;
  // The call of this case on the given operands (a plain call, no epilogue).
  GemmArgs args(const void* a, const void* b, void* c, cudaStream_t stream = nullptr) const;
};

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// Leading dimensions: the row length rounded up to a multiple of 8 elements
// (16 bytes, as TMA requires), plus `pad` elements.
GemmCase make_case(DType dtype, Layout layout, int64_t m, int64_t n, int64_t k, Fill fill, uint64_t seed,
                   int64_t pad = 0);

// Rows past M at the end of C (and of the reference C) that must keep their
// poison: a store that runs past the last row lands there.
inline constexpr int64_t kGuardRows = 2;

// The device buffers of a case. A and B are filled and checked to be mostly
// non-zero and NaN-free at construction; C and the reference C are poisoned
// (padding and guard rows included) by poison_outputs(). Every method that
// writes the buffers waits for the device, so a fill that faults throws there
// and a GEMM on any stream (non-blocking ones too) sees the finished data.
class Problem {
 public:
  explicit Problem(const GemmCase& gemm_case);

  const GemmCase& gemm_case() const { return case_; }
  uint16_t* a() const { return a_.data() + case_.offset_a; }
  uint16_t* b() const { return b_.data() + case_.offset_b; }
  uint16_t* c() const { return c_.data() + case_.offset_c; }
  uint16_t* c_ref() const { return c_ref_.data() + case_.offset_c; }
  // C as fill_outputs() left it, kept for the element-wise check (beta != 0);
  // null before fill_outputs().
  uint16_t* c0() const { return c0_.size() ? c0_.data() + case_.offset_c : nullptr; }
  // Elements of C from c() to the end of the guard rows.
  size_t c_span() const { return static_cast<size_t>((case_.m + kGuardRows) * case_.ldc); }

  // GemmArgs of the case that write into `c` (c() or c_ref()).
  GemmArgs args(uint16_t* c, cudaStream_t stream = nullptr) const;

  // New values for A and B, in place (same buffers, same layout), drawn from
  // `seed` as the constructor draws them from the case's seed.
  void refill_inputs(uint64_t seed) const;

  void poison_outputs() const;  // C and the reference C
  void poison_c() const;        // C only: keeps a computed reference
  // The same seeded matrix in C, the reference C and c0(), for beta != 0.
  void fill_outputs(Fill fill, uint64_t seed);

  std::vector<uint16_t> download_c() const { return download(c(), c_span()); }
  std::vector<uint16_t> download_ref() const { return download(c_ref(), c_span()); }

 private:
  GemmCase case_;
  using Buffer = support::DeviceBuffer<uint16_t>;
  Buffer a_, b_, c_, c_ref_, c0_;
};

// tcgemm::gemm / reference_gemm, then synchronize: a kernel fault throws
// with the CUDA error and the case.
Plan run_gemm(const GemmArgs& args, const Options& options = {});
Plan run_reference(const GemmArgs& args);

// How `got` compares with `want` over an M x N matrix stored with ldc, both
// spanning (M + kGuardRows) rows. Every element of `got` outside M x N
// (padding columns, guard rows) must still hold `outside`, the poison that
// poison_outputs() and fill_outputs() put there.
struct Comparison {
  int64_t elements = 0;
  int64_t nan = 0;              // NaN/Inf in got's M x N
  int64_t ref_nan = 0;          // NaN/Inf in want's M x N
  int64_t ref_nonzero = 0;      // non-zero elements of want
  int64_t bit_mismatches = 0;   // got != want, bitwise
  int64_t beyond_bound = 0;     // outside the elementwise bound
  int64_t outside_changed = 0;  // padding columns or guard rows that changed
  double rel_fro = 0.0;         // ||got - want||_F / ||want||_F
  double max_abs = 0.0;
  std::string first_mismatch;  // "C[3,17]: got 1.5 (0x3e00), want 1.25 (0x3d00)"
  std::string first_beyond;
  std::string first_outside;
  std::string summary() const;
};
Comparison compare(DType dtype, const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, uint16_t outside,
                   int64_t m, int64_t n, int64_t ldc);

// Normwise bound (2e-3 fp16, 1e-2 bf16), elementwise bound, no NaN, nothing
// outside M x N written, and a reference that is itself sane.
void expect_close(const Comparison& c, DType dtype, const std::string& what);
// Bit for bit, no NaN, nothing outside M x N written, and a reference of
// which at least `min_nonzero` of the elements are not zero (a ReLU zeroes
// about half of a centred product: its tests pass a lower fraction).
void expect_identical(const Comparison& c, const std::string& what, double min_nonzero = 0.5);

// The configuration `v` forced is the one that ran: tcgemm's own kernel,
// whose name has v's tile, cluster, schedule and orientation, with v's width
// in the plan. (A dispatcher that dropped forced Options in some context,
// fused, batched, grouped or captured, would otherwise run the automatic
// kernel in every pass of an "every configuration" loop, unnoticed.)
void expect_ran(const Plan& plan, const support::KernelVariant& v, const std::string& what);

// Every element of the problem's C within the element-wise bound against a
// float64 reference (support/error_bound.hpp), computed on the GPU: strictly
// where tcgemm's code ran; where `backend` is the cuBLAS fallback, with the
// extra rounding of alpha*AB that cuBLAS makes on some paths allowed.
void expect_within_bound(const Problem& prob, Backend backend, const std::string& what);
// The output of a tcgemm call `plan` wrote into prob.c(), against the
// reference in prob.c_ref(): bit for bit in exact mode (small integers),
// else within the normwise and the element-wise bounds. `what` names the case.
void expect_correct(const Problem& prob, const Plan& plan, const std::string& what);

// Status ok, with the reason printed otherwise.
#define TCGEMM_ASSERT_OK(plan, what)             \
  ASSERT_EQ((plan).status, ::tcgemm::Status::ok) \
      << (what) << ": status " << ::tcgemm::to_string((plan).status) << ", reason: " << (plan).reason

// True when the reason is about alignment (a base or leading dimension TMA
// cannot describe).
bool mentions_alignment(const std::string& reason);

bool contains(const std::string& s, const std::string& part);
std::string lower(std::string s);

// Runs a shell command (a child process of the tests: the tool, or this test
// program again) and returns what it printed, stdout and stderr as the
// command line routes them; *status gets pclose's status (-1 if it could not
// start).
std::string run_child(const std::string& cmd, int* status);

}  // namespace tcgemm::test
