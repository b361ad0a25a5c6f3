// The cuBLAS fallback (and the baseline `tcgemm bench` compares against).
#pragma once

#include <string>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// Row-major C = alpha*op(A)@op(B) + beta*C through cublasGemmEx_64 with fp32
// compute, computed as the column-major C^T = op(B)^T op(A)^T. Reduced
// precision reductions are disallowed. Empty on success, else the reason.
// A strided batch (batch > 1) goes through cublasGemmStridedBatchedEx_64 the
// same way, each matrix row-major with its leading dimension and stride.
std::string cublas_gemm(const GemmArgs& args);

// The cuBLAS function cublas_gemm calls for `args` (Plan::kernel).
inline const char* cublas_kernel_name(const GemmArgs& args) {
  return args.batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
}

}  // namespace tcgemm::detail
