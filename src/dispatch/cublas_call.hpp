// One row-major GEMM (or strided batch of them) through a given cuBLAS
// handle: the call both tcgemm's fallback (its own handles, reduced-precision
// reductions disallowed) and
// `tcgemm bench`'s torch-configured baseline make, so the two differ only in
// how their handles are set up.
#pragma once

#include <cublas_v2.h>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// Row-major C = alpha*op(A)@op(B) + beta*C, fp32 compute, on the handle's
// stream. Row-major X with leading dimension ld is column-major X^T with the
// same ld, so row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T:
// the operands swap and each keeps its op.
inline cublasStatus_t cublas_gemm_ex(cublasHandle_t h, const GemmArgs& g) {
  const cudaDataType_t type = g.dtype == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasOperation_t ta = g.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = g.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  return cublasGemmEx_64(h, tb, ta, g.n, g.m, g.k, &g.alpha, g.b, type, g.ldb, g.a, type, g.lda, &g.beta, g.c, type,
                         g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

// A strided batch of the same (GemmArgs::batch, stride_*): matrix i of each
// operand starts stride elements after matrix i - 1, the operands swap as
// above and each keeps its stride.
inline cublasStatus_t cublas_gemm_strided_batched_ex(cublasHandle_t h, const GemmArgs& g) {
  const cudaDataType_t type = g.dtype == DType::f16 ? CUDA_R_16F : CUDA_R_16BF;
  const cublasOperation_t ta = g.op_a == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cublasOperation_t tb = g.op_b == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T;
  return cublasGemmStridedBatchedEx_64(h, tb, ta, g.n, g.m, g.k, &g.alpha, g.b, type, g.ldb, g.stride_b, g.a, type,
                                       g.lda, g.stride_a, &g.beta, g.c, type, g.ldc, g.stride_c, g.batch,
                                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

}  // namespace tcgemm::detail
