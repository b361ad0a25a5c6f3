// Errors at the edges: what the library does with resources and sizes at
// their limits. Each case is handled (a correct result) or rejected with a
// reason and nothing written; never a wrong answer.
#include <gtest/gtest.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>
#include <thread>
#include <vector>

#include "gemm_case.hpp"

namespace tcgemm::test {
namespace {

class Edges : public GpuTest {};

// Operands with more than 2^31 elements (A is 2^20+7 x 2056: 2.16e9): every
// offset must be computed in 64 bits, in the kernel and in the tensor maps.
TEST_F(Edges, OperandsBeyond32BitElementCounts) {
  for (const Layout& layout : {kLayouts[0], kLayouts[2]}) {
    const GemmCase gc = make_case(DType::f16, layout, (int64_t{1} << 20) + 7, 24, 2056, Fill::small_int, 41000);
    ASSERT_GT(gc.m * gc.k, int64_t{1} << 31);
    const std::string what = gc.describe();
    SCOPED_TRACE(what);
    Problem prob(gc);
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
    const Plan p = run_gemm(prob.args(prob.c()));
    TCGEMM_ASSERT_OK(p, what);
    EXPECT_EQ(p.backend, own_backend()) << p.reason;
    expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n,
                             gc.ldc),
                     what);
  }
}

// A thread with no CUDA context current (the driver API's context popped):
// the runtime makes the device's primary context current again; the call
// either runs correctly or says why not.
TEST_F(Edges, NoContextCurrent) {
  const GemmCase gc = make_case(DType::bf16, kLayouts[1], 300, 200, 100, Fill::small_int, 42000);
  Problem prob(gc);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), gc.describe());
  // The driver API through the runtime's entry points: the test binary must
  // load (and skip) on machines without a driver, so it does not link libcuda.
  void* set_fn = nullptr;
  void* get_fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &set_fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  ASSERT_TRUE(set_fn != nullptr && get_fn != nullptr);
  ASSERT_EQ(reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(set_fn)(nullptr), CUDA_SUCCESS);
  CUcontext current = reinterpret_cast<CUcontext>(1);
  ASSERT_EQ(reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(get_fn)(&current), CUDA_SUCCESS);
  ASSERT_EQ(current, nullptr) << "the test needs no context current";
  const Plan p = run_gemm(prob.args(prob.c()));
  TCGEMM_ASSERT_OK(p, gc.describe());
  expect_identical(
      compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
      gc.describe());
}

// A context of the device other than the one tcgemm was set up in (a
// context the caller created and made current; the same after
// cudaDeviceReset): the kernels' setup (their shared-memory opt-in) and the
// cuBLAS handles belong to the first, so the call is refused with a reason and
// nothing written; back in the first context, calls run again.
TEST_F(Edges, AnotherContextIsRefused) {
  const GemmCase gc = make_case(DType::f16, kLayouts[1], 256, 192, 128, Fill::small_int, 42500);
  Problem prob(gc);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), gc.describe());
  TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), "set up in the primary context");
  void* create_fn = nullptr;
  void* pop_fn = nullptr;
  void* destroy_fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxCreate", &create_fn, 12050, cudaEnableDefault, &q), cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxPopCurrent", &pop_fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  ASSERT_EQ(cudaGetDriverEntryPointByVersion("cuCtxDestroy", &destroy_fn, 12000, cudaEnableDefault, &q), cudaSuccess);
  ASSERT_TRUE(create_fn != nullptr && pop_fn != nullptr && destroy_fn != nullptr);
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  prob.poison_c();
  CUcontext other = nullptr;  // (cuCtxCreate makes it current)
  ASSERT_EQ(reinterpret_cast<PFN_cuCtxCreate_v12050>(create_fn)(&other, nullptr, 0, dev), CUDA_SUCCESS);
  const Plan refused = tcgemm::gemm(prob.args(prob.c()));
  CUcontext popped = nullptr;
  ASSERT_EQ(reinterpret_cast<PFN_cuCtxPopCurrent_v4000>(pop_fn)(&popped), CUDA_SUCCESS);
  ASSERT_EQ(popped, other);
  ASSERT_EQ(reinterpret_cast<PFN_cuCtxDestroy_v4000>(destroy_fn)(other), CUDA_SUCCESS);
  EXPECT_EQ(refused.status, Status::unsupported) << refused.reason;
  EXPECT_TRUE(contains(refused.reason, "context")) << refused.reason;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  int64_t changed = 0;
  for (uint16_t v : prob.download_c()) changed += v != poison_bits(gc.dtype);
  EXPECT_EQ(changed, 0) << "a refused call wrote to C";
  TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), "back in the primary context");
  expect_identical(
      compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
      gc.describe());
}

// With the device's memory exhausted: tcgemm's kernels allocate nothing and
// still run; a first cuBLAS call on a new thread (a new handle, a new
// workspace) either runs or fails with a reason, C untouched.
TEST_F(Edges, OutOfDeviceMemory) {
  const GemmCase gc = make_case(DType::f16, kLayouts[0], 512, 384, 256, Fill::small_int, 43000);
  Problem prob(gc);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), gc.describe());
  std::vector<void*> hog;
  for (size_t chunk = size_t{1} << 30; chunk >= (size_t{1} << 20);) {
    void* p = nullptr;
    if (cudaMalloc(&p, chunk) == cudaSuccess)
      hog.push_back(p);
    else
      chunk /= 2;
  }
  cudaGetLastError();
  size_t free = 0, total = 0;
  cudaMemGetInfo(&free, &total);
  Plan ours, cublas;
  std::vector<uint16_t> c_ours, c_cublas;
  {
    prob.poison_c();
    ours = run_gemm(prob.args(prob.c()));
    c_ours = prob.download_c();
    prob.poison_c();
    std::thread t([&] { cublas = tcgemm::gemm(prob.args(prob.c()), Options{Prefer::cublas_only, 0}); });
    t.join();
    cudaDeviceSynchronize();
    c_cublas = prob.download_c();
  }
  for (void* p : hog) cudaFree(p);
  SCOPED_TRACE("free device memory during the calls: " + std::to_string(free) + " bytes");
  TCGEMM_ASSERT_OK(ours, gc.describe());
  expect_identical(compare(gc.dtype, c_ours, prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
                   "tcgemm's kernel with the device full");
  if (cublas.status == Status::ok) {
    expect_identical(compare(gc.dtype, c_cublas, prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
                     "cuBLAS with the device full");
  } else {
    EXPECT_TRUE(contains(cublas.reason, "cublas") || contains(cublas.reason, "cuBLAS")) << cublas.reason;
    int64_t changed = 0;
    for (uint16_t v : c_cublas) changed += v != poison_bits(gc.dtype);
    EXPECT_EQ(changed, 0) << "a failed call wrote to C: " << cublas.reason;
  }
}

// A stream created on another device is refused: the kernel would run on the
// current device while the caller orders work on the other one.
TEST_F(Edges, StreamOfAnotherDevice) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "needs two GPUs (this machine has " << count << ")";
  const GemmCase gc = make_case(DType::f16, kLayouts[0], 256, 256, 64, Fill::small_int, 44000);
  Problem prob(gc);
  int current = 0;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  cudaStream_t other = nullptr;
  ASSERT_EQ(cudaSetDevice(current == 0 ? 1 : 0), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&other), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(current), cudaSuccess);
  prob.poison_c();
  for (const Plan& p : {tcgemm::gemm(prob.args(prob.c(), other)), tcgemm::reference_gemm(prob.args(prob.c(), other))}) {
    EXPECT_EQ(p.status, Status::invalid_argument) << p.reason;
    EXPECT_TRUE(contains(p.reason, "stream belongs to device")) << p.reason;
  }
  cudaStreamDestroy(other);
  int64_t changed = 0;
  for (uint16_t v : prob.download_c()) changed += v != poison_bits(gc.dtype);
  EXPECT_EQ(changed, 0);
}

}  // namespace
}  // namespace tcgemm::test
