#include "dispatch/cublas_fallback.hpp"

#include <array>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace tcgemm::detail {

namespace {

// One handle per thread and device (a handle must not be used by two threads
// at once), destroyed when the thread exits: a process whose threads come and
// go (pools, per-request threads) would otherwise leak one handle and its
// workspace per thread (`tcgemm check --soak` measured 270 MB over 4 of
// them). At process exit the CUDA runtime may already be unloading; then
// cudaGetDevice fails and the handle is left to the process teardown.
struct ThreadHandles {
  std::array<cublasHandle_t, 64> handles{};
  ~ThreadHandles() {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) return;
    // cublasDestroy frees device memory: legal in relaxed mode even while
    // another thread captures a graph in global mode.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    for (cublasHandle_t h : handles)
      if (h != nullptr) cublasDestroy(h);
    cudaThreadExchangeStreamCaptureMode(&mode);
  }
};

cublasHandle_t handle_for(int device, cublasStatus_t* status) {
  thread_local ThreadHandles per_thread;
  auto& handles = per_thread.handles;
  if (device < 0 || device >= 64) {
    *status = CUBLAS_STATUS_INVALID_VALUE;
    return nullptr;
  }
  if (handles[device] == nullptr) {
    // cublasCreate allocates device memory, which a stream capture in global
    // or thread_local mode forbids (the call fails and the capture is
    // invalidated) when a thread's first fallback call is captured. Relaxed
    // mode for this thread only, for the one allocation: it belongs to the
    // handle, not to the graph, so it is legal then.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cublasHandle_t h = nullptr;
    *status = cublasCreate(&h);
    cudaThreadExchangeStreamCaptureMode(&mode);
    if (*status != CUBLAS_STATUS_SUCCESS) return nullptr;
    cublasSetMathMode(h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                   CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
    handles[device] = h;
  }
  *status = CUBLAS_STATUS_SUCCESS;
  return handles[device];
}

}  // namespace

std::string cublas_gemm(const GemmArgs& g) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "cudaGetDevice failed";
  cublasStatus_t st{};
  cublasHandle_t h = handle_for(device, &st);
  if (h == nullptr) return std::string("cublasCreate failed: ") + cublasGetStatusString(st);
  st = cublasSetStream(h, g.stream);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasSetStream failed: ") + cublasGetStatusString(st);
  const cudaDataType_t type = g.dtype == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  // Row-major X with leading dimension ld is column-major X^T with the same
  // ld, so row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
  // swap the operands and keep each op.
  const cublasOperation_t ta = g.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = g.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  st = cublasGemmEx_64(h, tb, ta, g.n, g.m, g.k, &g.alpha, g.b, type, g.ldb, g.a, type, g.lda, &g.beta, g.c, type,
                       g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasGemmEx failed: ") + cublasGetStatusString(st);
  return {};
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace tcgemm::detail
