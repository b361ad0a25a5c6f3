// The documented contract around the numerics: degenerate shapes, rejected
// calls that must leave C alone, plan() launching nothing, and the C ABI.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_case.hpp"
#include "tcgemm/tcgemm.h"

namespace tcgemm::test {
namespace {

int64_t count_changed(const std::vector<uint16_t>& now, const std::vector<uint16_t>& before) {
  int64_t n = 0;
  for (size_t i = 0; i < now.size(); ++i) n += now[i] != before[i];
  return n;
}

class Contract : public GpuTest {};

// M == 0 or N == 0: success, nothing launched, C untouched (even its poison).
TEST_F(Contract, EmptyOutputLeavesCUntouched) {
  for (DType dt : {DType::f16, DType::bf16})
    for (int which = 0; which < 2; ++which) {
      GemmCase gc = make_case(dt, kLayouts[0], 64, 64, 64, Fill::small_int, 30000 + which);
      Problem prob(gc);
      const std::vector<uint16_t> before = prob.download_c();
      GemmArgs g = prob.args(prob.c());
      (which == 0 ? g.m : g.n) = 0;
      g.beta = 2.0f;
      const std::string what = gc.describe() + (which == 0 ? " with m=0" : " with n=0");
      const Plan p = run_gemm(g);
      TCGEMM_ASSERT_OK(p, what);
      EXPECT_EQ(p.backend, Backend::none) << what;
      EXPECT_EQ(count_changed(prob.download_c(), before), 0) << what;
      // Null operands are fine when nothing is read.
      g.a = nullptr;
      g.b = nullptr;
      TCGEMM_ASSERT_OK(run_gemm(g), what + " and null A, B");
    }
}

// K == 0: C = beta * C, exactly; A and B are not read (null is fine).
TEST_F(Contract, ZeroKScalesC) {
  for (DType dt : {DType::f16, DType::bf16})
    for (float beta : {2.0f, 0.5f, -1.0f, 1.0f}) {
      GemmCase gc = make_case(dt, kLayouts[0], 129, 257, 8, Fill::small_int, 31000);
      Problem prob(gc);
      prob.fill_outputs(Fill::small_int, 31001);
      const std::vector<uint16_t> before = prob.download_c();
      GemmArgs g = prob.args(prob.c());
      g.k = 0;
      g.a = nullptr;
      g.b = nullptr;
      g.beta = beta;
      g.alpha = 3.0f;  // multiplies an empty sum: no effect
      const std::string what = gc.describe() + " with k=0 beta=" + std::to_string(beta);
      const Plan p = run_gemm(g);
      TCGEMM_ASSERT_OK(p, what);
      // Backend::none: "a scale-only kernel (K == 0)", never a GEMM.
      EXPECT_EQ(p.backend, Backend::none) << "K == 0 is handled before any GEMM launch: " << what;
      const std::vector<uint16_t> after = prob.download_c();
      int64_t wrong = 0, nonzero = 0;
      std::string first;
      for (int64_t r = 0; r < gc.m + kGuardRows; ++r)
        for (int64_t c = 0; c < gc.ldc; ++c) {
          const size_t i = static_cast<size_t>(r * gc.ldc + c);
          const bool inside = r < gc.m && c < gc.n;
          // Small integers times these betas are exact in fp16 and bf16.
          const uint16_t want = inside ? from_float(dt, beta * to_float(dt, before[i])) : before[i];
          nonzero += inside && (before[i] & 0x7FFF) != 0;
          if (after[i] != want && wrong++ == 0)
            first = "C[" + std::to_string(r) + "," + std::to_string(c) +
                    "] = " + std::to_string(to_float(dt, after[i])) + ", want " + std::to_string(to_float(dt, want));
        }
      EXPECT_GT(nonzero, gc.m * gc.n / 2) << "C must start mostly non-zero";
      EXPECT_EQ(wrong, 0) << what << ": " << first;
    }
}

// alpha == 0: C = beta * C, exactly, as for K == 0 (BLAS): A and B are not
// read, so NaN in them does not reach C, whatever Options::prefer.
TEST_F(Contract, AlphaZeroScalesCAndReadsNeitherAnorB) {
  for (DType dt : {DType::f16, DType::bf16})
    for (const Prefer prefer : {Prefer::automatic, Prefer::cublas_only}) {
      GemmCase gc = make_case(dt, kLayouts[0], 129, 257, 64, Fill::small_int, 31500);
      Problem prob(gc);
      prob.fill_outputs(Fill::small_int, 31501);
      // A all NaN (0xFFFF in both types).
      check_cuda(cudaMemset(prob.a(), 0xFF, static_cast<size_t>(gc.m * gc.lda) * 2), "NaN A");
      const std::vector<uint16_t> before = prob.download_c();
      GemmArgs g = prob.args(prob.c());
      g.alpha = 0.0f;
      g.beta = 0.5f;
      const std::string what = gc.describe() + " with alpha=0 beta=0.5";
      const Plan p = run_gemm(g, Options{prefer, 0});
      TCGEMM_ASSERT_OK(p, what);
      EXPECT_EQ(p.path, Path::scale) << what;
      const std::vector<uint16_t> after = prob.download_c();
      int64_t wrong = 0;
      for (int64_t r = 0; r < gc.m + kGuardRows; ++r)
        for (int64_t c = 0; c < gc.ldc; ++c) {
          const size_t i = static_cast<size_t>(r * gc.ldc + c);
          const bool inside = r < gc.m && c < gc.n;
          wrong += after[i] != (inside ? from_float(dt, 0.5f * to_float(dt, before[i])) : before[i]);
        }
      EXPECT_EQ(wrong, 0) << what;
      g.a = nullptr;  // not read: null is fine
      g.b = nullptr;
      TCGEMM_ASSERT_OK(run_gemm(g), what + " and null A, B");
    }
}

// A CUDA error left by the caller (here a failed cudaMalloc, which is not
// sticky) is not this call's failure: the call runs and reports success.
TEST_F(Contract, ACallersEarlierErrorIsNotThisCallsFailure) {
  GemmCase gc = make_case(DType::bf16, kLayouts[0], 64, 64, 64, Fill::small_int, 31700);
  Problem prob(gc);
  // (Once first, outside the test: the library's first call on a device sets up what it caches.)
  TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), "warm-up");
  for (const int64_t k : {int64_t{0}, gc.k}) {
    prob.fill_outputs(Fill::small_int, 31701 + static_cast<uint64_t>(k));
    GemmArgs ref = prob.args(prob.c_ref());
    ref.k = k;
    ref.beta = 2.0f;
    TCGEMM_ASSERT_OK(run_reference(ref), "reference");
    void* huge = nullptr;
    ASSERT_NE(cudaMalloc(&huge, size_t{1} << 52), cudaSuccess) << "a 4 PiB allocation should fail";
    GemmArgs g = ref;
    g.c = prob.c();
    // (tcgemm::gemm itself, not run_gemm, which reads cudaGetLastError and so
    // would see the caller's error that this call must leave alone.)
    const Plan p = tcgemm::gemm(g);
    check_cuda(cudaStreamSynchronize(g.stream), "after the call");
    EXPECT_EQ(p.status, Status::ok) << "k=" << k << ": " << p.reason;
    EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation) << "the caller's error is still the caller's to read";
    // And it did its work: C as the reference has it (small integers: exact).
    expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n,
                             gc.ldc),
                     "k=" + std::to_string(k));
  }
}

// Another GPU's memory is refused up front (a kernel would fault on it,
// sticky for the context), with nothing written.
TEST_F(Contract, AnotherDevicesMemoryIsRefused) {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "device count");
  if (count < 2) GTEST_SKIP() << "needs two GPUs";
  GemmCase gc = make_case(DType::f16, kLayouts[0], 64, 64, 64, Fill::small_int, 31800);
  Problem prob(gc);
  int current = 0;
  check_cuda(cudaGetDevice(&current), "current device");
  const int other = current == 0 ? 1 : 0;
  void* c_other = nullptr;
  check_cuda(cudaSetDevice(other), "set device");
  check_cuda(cudaMalloc(&c_other, static_cast<size_t>(gc.m * gc.ldc) * 2), "C on the other device");
  check_cuda(cudaSetDevice(current), "set device back");
  GemmArgs g = prob.args(prob.c());
  g.c = c_other;
  const Plan p = run_gemm(g);
  EXPECT_EQ(p.status, Status::invalid_argument) << p.reason;
  EXPECT_TRUE(contains(p.reason, "C is memory of device " + std::to_string(other))) << p.reason;
  check_cuda(cudaFree(c_other), "free");
}

// K == 0 and beta == 0: C is not read, so NaN in C becomes zeros.
TEST_F(Contract, ZeroKBetaZeroOverwritesNaNWithZeros) {
  for (DType dt : {DType::f16, DType::bf16}) {
    GemmCase gc = make_case(dt, kLayouts[0], 100, 72, 8, Fill::small_int, 32000);
    Problem prob(gc);  // C poisoned with NaN
    GemmArgs g = prob.args(prob.c());
    g.k = 0;
    g.beta = 0.0f;
    const std::string what = gc.describe() + " with k=0 beta=0";
    TCGEMM_ASSERT_OK(run_gemm(g), what);
    const std::vector<uint16_t> after = prob.download_c();
    int64_t not_zero = 0, outside = 0;
    for (int64_t r = 0; r < gc.m + kGuardRows; ++r)
      for (int64_t c = 0; c < gc.ldc; ++c) {
        const uint16_t v = after[static_cast<size_t>(r * gc.ldc + c)];
        if (r < gc.m && c < gc.n)
          not_zero += to_float(dt, v) != 0.0f || is_nan_or_inf(dt, v);
        else
          outside += v != poison_bits(dt);
      }
    EXPECT_EQ(not_zero, 0) << what;
    EXPECT_EQ(outside, 0) << "written outside M x N: " << what;
  }
}

// C may be a view into a wider matrix: the columns [N, ldc) belong to the
// caller and are never written, whatever N is. (TMA stores write whole
// 16-byte chunks, so an N that is not a multiple of 8 elements is the case
// to watch.)
TEST_F(Contract, ColumnsPastNAreNeverWritten) {
  uint64_t seed = 29000;
  for (int64_t n : {1, 63, 100, 257, 264})
    for (DType dt : {DType::f16, DType::bf16})
      for (float beta : {0.0f, 1.0f}) {
        GemmCase gc = make_case(dt, kLayouts[1], 130, n, 96, Fill::small_int, ++seed, /*pad=*/16);
        gc.beta = beta;
        const std::string what = gc.describe();
        Problem prob(gc);
        if (beta != 0.0f) prob.fill_outputs(Fill::small_int, seed + 1);
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        const Plan p = run_gemm(prob.args(prob.c()));
        TCGEMM_ASSERT_OK(p, what);
        expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                         what + " backend=" + to_string(p.backend) + " kernel " + p.kernel);
      }
}

// A rejected call writes nothing to C.
TEST_F(Contract, HostPointerIsRejectedAndCKeepsItsPoison) {
  for (DType dt : {DType::f16, DType::bf16}) {
    GemmCase gc = make_case(dt, kLayouts[0], 128, 128, 64, Fill::small_int, 33000);
    Problem prob(gc);
    const std::vector<uint16_t> host_a = download(prob.a(), static_cast<size_t>(gc.m * gc.lda));
    GemmArgs g = prob.args(prob.c());
    g.a = host_a.data();
    const std::string what = gc.describe() + " with A in host memory";
    for (const Options& opt : {Options{}, Options{Prefer::cublas_only, 0}}) {
      const Plan p = run_gemm(g, opt);
      EXPECT_NE(p.status, Status::ok) << what;
      const std::string r = lower(p.reason);
      EXPECT_TRUE(contains(r, "host") || contains(r, "device memory") || contains(r, "device pointer"))
          << "the reason should say A is not device memory: '" << p.reason << "' " << what;
      const std::vector<uint16_t> c = prob.download_c();
      int64_t changed = 0;
      for (uint16_t v : c) changed += v != poison_bits(dt);
      EXPECT_EQ(changed, 0) << "a rejected call wrote to C: " << what;
    }
  }
}

TEST_F(Contract, HostOutputIsRejected) {
  GemmCase gc = make_case(DType::f16, kLayouts[0], 64, 64, 64, Fill::small_int, 33500);
  Problem prob(gc);
  std::vector<uint16_t> host_c(static_cast<size_t>(gc.m * gc.ldc), poison_bits(gc.dtype));
  GemmArgs g = prob.args(nullptr);
  g.c = host_c.data();
  const Plan p = run_gemm(g);
  EXPECT_NE(p.status, Status::ok) << gc.describe();
  EXPECT_TRUE(contains(lower(p.reason), "host") || contains(lower(p.reason), "device")) << p.reason;
  for (uint16_t v : host_c) ASSERT_EQ(v, poison_bits(gc.dtype)) << "host C was written";
}

TEST_F(Contract, InvalidArgumentsLeaveCUntouched) {
  GemmCase gc = make_case(DType::bf16, kLayouts[2], 96, 80, 48, Fill::small_int, 34000);
  Problem prob(gc);
  struct Bad {
    const char* expect;
    void (*apply)(GemmArgs&);
  };
  const Bad bads[] = {
      {"lda=", [](GemmArgs& g) { g.lda = g.m - 1; }},
      {"ldc=", [](GemmArgs& g) { g.ldc = g.n - 1; }},
      {"negative", [](GemmArgs& g) { g.k = -1; }},
      {"unknown dtype", [](GemmArgs& g) { g.dtype = static_cast<DType>(5); }},
      {"B is a null pointer", [](GemmArgs& g) { g.b = nullptr; }},
      {"C is not aligned to its 2-byte elements", [](GemmArgs& g) { g.c = static_cast<char*>(g.c) + 1; }},
      {"A is not aligned to its 2-byte elements", [](GemmArgs& g) { g.a = static_cast<const char*>(g.a) + 1; }},
      {"C overlaps B in memory", [](GemmArgs& g) { g.c = const_cast<void*>(g.b); }},
  };
  for (const Bad& bad : bads) {
    GemmArgs g = prob.args(prob.c());
    bad.apply(g);
    const Plan p = run_gemm(g);
    EXPECT_EQ(p.status, Status::invalid_argument) << bad.expect << ": " << p.reason;
    EXPECT_TRUE(contains(p.reason, bad.expect)) << p.reason;
    int64_t changed = 0;
    for (uint16_t v : prob.download_c()) changed += v != poison_bits(gc.dtype);
    EXPECT_EQ(changed, 0) << "rejected call (" << bad.expect << ") wrote to C";
  }
}

// Options::block_n documents 0 and kTileWidths. Another value is either
// rejected with a reason naming it, or ignored; it never picks an unbuilt tile.
TEST_F(Contract, UnsupportedBlockNIsRejectedOrIgnored) {
  GemmCase gc = make_case(DType::f16, kLayouts[0], 256, 384, 128, Fill::small_int, 35000);
  Problem prob(gc);
  for (int bn : {24, 80, 512}) {
    prob.poison_outputs();
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), gc.describe());
    const Plan p = run_gemm(prob.args(prob.c()), Options{Prefer::automatic, bn});
    if (p.status == Status::ok) {
      EXPECT_TRUE(p.backend == Backend::cublas || contains(p.kernel, "x64x64") || contains(p.kernel, "x128x64") ||
                  contains(p.kernel, "x192x") || contains(p.kernel, "x256x"))
          << "block_n=" << bn << " ran " << p.kernel;
      expect_identical(
          compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
          gc.describe() + " block_n=" + std::to_string(bn));
    } else {
      EXPECT_EQ(p.status, Status::invalid_argument) << p.reason;
      EXPECT_TRUE(contains(p.reason, "block_n")) << p.reason;
    }
  }
}

// Options that belong to the other kernel family are refused with a reason
// naming them, and nothing is written; the family's own options run.
TEST_F(Contract, FamilyOptionsAreCheckedPerDevice) {
  // (NT: every configuration below is built for it on its family.)
  GemmCase gc = make_case(DType::f16, kLayouts[1], 300, 520, 200, Fill::small_int, 35500);
  Problem prob(gc);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), gc.describe());
  Options clc;
  clc.schedule = Schedule::cluster_launch_control;
  Options sm90_only{Prefer::automatic, 128, 1, true};  // ping-pong: sm90's alone
  Options sm100_only{Prefer::automatic, 16, 1};  // the single-CTA 128 x 16 tile
  sm100_only.block_m = 128;
  Options bad_schedule;
  bad_schedule.schedule = static_cast<Schedule>(7);
  const bool sm100 = own_backend() == Backend::sm100;
  // (options, whether this device's family accepts them, what a refusal names)
  const std::tuple<Options, bool, const char*> cases[] = {{clc, sm100, "cluster_launch_control"},
                                                          {sm90_only, !sm100, "pingpong"},
                                                          {sm100_only, sm100, "block_n=16"},
                                                          {bad_schedule, false, "schedule"}};
  for (const auto& [options, accepted, names] : cases) {
    prob.poison_c();
    const Plan p = run_gemm(prob.args(prob.c()), options);
    if (accepted) {
      TCGEMM_ASSERT_OK(p, gc.describe());
      EXPECT_EQ(p.backend, own_backend()) << p.reason;
      expect_identical(
          compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
          gc.describe() + " " + names);
    } else {
      EXPECT_EQ(p.status, Status::invalid_argument) << p.reason;
      EXPECT_TRUE(contains(p.reason, names)) << p.reason;
      int64_t changed = 0;
      for (uint16_t v : prob.download_c()) changed += v != poison_bits(gc.dtype);
      EXPECT_EQ(changed, 0) << "a refused call wrote to C: " << p.reason;
    }
  }
}

// plan() decides without launching: C keeps its poison.
TEST_F(Contract, PlanLaunchesNothing) {
  GemmCase gc = make_case(DType::f16, kLayouts[3], 300, 200, 100, Fill::small_int, 36000);
  Problem prob(gc);
  const Plan p = plan(prob.args(prob.c()));
  TCGEMM_ASSERT_OK(p, gc.describe());
  EXPECT_EQ(p.backend, own_backend()) << p.reason;
  EXPECT_FALSE(p.kernel.empty());
  EXPECT_FALSE(p.reason.empty()) << "a plan says why it chose its backend";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int64_t changed = 0;
  for (uint16_t v : prob.download_c()) changed += v != poison_bits(gc.dtype);
  EXPECT_EQ(changed, 0);
  const Plan cub = plan(prob.args(prob.c()), Options{Prefer::cublas_only, 0});
  TCGEMM_ASSERT_OK(cub, gc.describe());
  EXPECT_EQ(cub.backend, Backend::cublas);
}

// The C ABI end to end, on a non-default stream.
TEST_F(Contract, CAbiEndToEnd) {
  for (DType dt : {DType::f16, DType::bf16}) {
    GemmCase gc = make_case(dt, kLayouts[2], 129, 257, 65, Fill::small_int, 37000);
    const std::string what = gc.describe();
    Problem prob(gc);
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), what);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    const int rc = tcgemm_gemm(static_cast<int>(dt), static_cast<int>(gc.op_a), static_cast<int>(gc.op_b), gc.m, gc.n,
                               gc.k, 1.0f, prob.a(), gc.lda, prob.b(), gc.ldb, 0.0f, prob.c(), gc.ldc, stream);
    const std::string err = rc != 0 ? tcgemm_last_error() : "";
    const cudaError_t sync = cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
    ASSERT_EQ(rc, 0) << what << ": " << err;
    ASSERT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
    expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                     "C ABI " + what);

    // A failure through the C ABI: non-zero, a reason, C untouched.
    prob.poison_outputs();
    std::vector<uint16_t> host_b(static_cast<size_t>(gc.n * gc.ldb));
    const int bad = tcgemm_gemm(static_cast<int>(dt), static_cast<int>(gc.op_a), static_cast<int>(gc.op_b), gc.m, gc.n,
                                gc.k, 1.0f, prob.a(), gc.lda, host_b.data(), gc.ldb, 0.0f, prob.c(), gc.ldc, nullptr);
    EXPECT_NE(bad, 0) << "host B accepted: " << what;
    const std::string reason = tcgemm_last_error();
    EXPECT_TRUE(contains(lower(reason), "host")) << "'" << reason << "'";
    int64_t changed = 0;
    for (uint16_t v : prob.download_c()) changed += v != poison_bits(dt);
    EXPECT_EQ(changed, 0) << "a failed C ABI call wrote to C";

    // A later successful call leaves the last error as it was (tcgemm.h).
    ASSERT_EQ(tcgemm_gemm(static_cast<int>(dt), static_cast<int>(gc.op_a), static_cast<int>(gc.op_b), gc.m, gc.n, gc.k,
                          1.0f, prob.a(), gc.lda, prob.b(), gc.ldb, 0.0f, prob.c(), gc.ldc, nullptr),
              0)
        << tcgemm_last_error();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(std::string(tcgemm_last_error()), reason);
  }
}

}  // namespace
}  // namespace tcgemm::test
