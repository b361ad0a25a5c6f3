#include "torch_cublas.hpp"

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "dispatch/cublas_call.hpp"

namespace tcgemm::cli {

TorchConfiguredCublas::TorchConfiguredCublas() {
  int device = 0, major = 0, minor = 0;
  CHECK_CUDA(cudaGetDevice(&device));
  CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  workspace_bytes_ = major == 9 && minor == 0 ? size_t{32} << 20 : (size_t{8} << 20) + (size_t{128} << 10);
  CHECK_CUDA(cudaMalloc(&workspace_, workspace_bytes_));
  CHECK_CUBLAS(cublasCreate(&handle_));
  CHECK_CUBLAS(cublasSetWorkspace(handle_, workspace_, workspace_bytes_));
  CHECK_CUBLAS(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}

TorchConfiguredCublas::~TorchConfiguredCublas() {
  cublasDestroy(handle_);
  cudaFree(workspace_);
}

std::string TorchConfiguredCublas::gemm(const GemmArgs& args) {
  if (const cublasStatus_t st = cublasSetStream(handle_, args.stream); st != CUBLAS_STATUS_SUCCESS)
    return std::string("cublasSetStream failed: ") + cublasGetStatusString(st);
  // (A strided batch: cublasGemmStridedBatchedEx, the call a batched torch.matmul makes.)
  const cublasStatus_t st = args.batch > 1 ? detail::cublas_gemm_strided_batched_ex(handle_, args)
                                           : detail::cublas_gemm_ex(handle_, args);
  if (st != CUBLAS_STATUS_SUCCESS)
    return std::string(args.batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx") + " failed: " +
           cublasGetStatusString(st);
  return {};
}

}  // namespace tcgemm::cli
