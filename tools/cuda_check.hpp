// Error checks for the command line tool. Every CUDA and cuBLAS call in tools/
// goes through one of these: a failure prints where it happened and what was
// called, then exits, because a tool that carries on after a failed launch
// prints numbers that mean nothing. The shared helpers in support/ throw
// support::CudaError instead; main() turns that into the same exit.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace tcgemm::cli {

[[noreturn]] inline void fail_cuda(cudaError_t status, const char* expr, const char* file, int line) {
  std::fflush(stdout);
  std::fprintf(stderr, "tcgemm: %s:%d: %s failed: %s (%s)\n", file, line, expr, cudaGetErrorName(status),
               cudaGetErrorString(status));
  std::exit(1);
}

[[noreturn]] inline void fail_cublas(cublasStatus_t status, const char* expr, const char* file, int line) {
  std::fflush(stdout);
  std::fprintf(stderr, "tcgemm: %s:%d: %s failed: %s (%d)\n", file, line, expr, cublasGetStatusString(status),
               static_cast<int>(status));
  std::exit(1);
}

}  // namespace tcgemm::cli

#define CHECK_CUDA(expr)                                                                 \
  do {                                                                                   \
    const cudaError_t check_cuda_status_ = (expr);                                       \
    if (check_cuda_status_ != cudaSuccess)                                               \
      ::tcgemm::cli::fail_cuda(check_cuda_status_, #expr, __FILE__, __LINE__);           \
  } while (0)

#define CHECK_CUBLAS(expr)                                                               \
  do {                                                                                   \
    const cublasStatus_t check_cublas_status_ = (expr);                                  \
    if (check_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                   \
      ::tcgemm::cli::fail_cublas(check_cublas_status_, #expr, __FILE__, __LINE__);       \
  } while (0)
