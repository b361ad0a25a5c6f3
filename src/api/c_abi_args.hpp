// The C ABI's arguments as GemmArgs: how tcgemm_gemm() (and its batched
// neighbour) reads its parameters
// (shared with the API fuzzer, which checks plan() against it).
#pragma once

#include <cstdint>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// Out-of-range enum values are carried through, for validation to reject
// with a message that names them.
inline GemmArgs c_abi_args(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                           int64_t lda, const void* b, int64_t ldb, float beta, void* c, int64_t ldc, void* stream) {
  GemmArgs args;
  args.dtype = static_cast<DType>(dtype);
  args.op_a = static_cast<Op>(op_a);
  args.op_b = static_cast<Op>(op_b);
  args.m = m;
  args.n = n;
  args.k = k;
  args.alpha = alpha;
  args.a = a;
  args.lda = lda;
  args.b = b;
  args.ldb = ldb;
  args.beta = beta;
  args.c = c;
  args.ldc = ldc;
  args.stream = static_cast<cudaStream_t>(stream);
  return args;
}

// tcgemm_gemm_strided_batched()'s arguments: c_abi_args and the batch.
inline GemmArgs c_abi_strided_batched_args(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                                           float alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                                           int64_t ldb, int64_t stride_b, float beta, void* c, int64_t ldc,
                                           int64_t stride_c, int64_t batch, void* stream) {
  GemmArgs args = c_abi_args(dtype, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
  args.batch = batch;
  args.stride_a = stride_a;
  args.stride_b = stride_b;
  args.stride_c = stride_c;
  return args;
}

// tcgemm_gemm_m_grouped()'s arguments: c_abi_args (op_a = N) and the groups.
inline GemmArgs c_abi_m_grouped_args(int dtype, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                                     int64_t lda, const void* b, int64_t ldb, int64_t stride_b, float beta, void* c,
                                     int64_t ldc, const int32_t* group_ends, int64_t groups, void* stream) {
  GemmArgs args = c_abi_args(dtype, 0, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
  args.stride_b = stride_b;
  args.group_ends = group_ends;
  args.groups = groups;
  return args;
}

}  // namespace tcgemm::detail
