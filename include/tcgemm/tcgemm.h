/* tcgemm C ABI — a stable, published interface for ctypes, Rust, Julia, ...
 *
 *   C = alpha * op(A) @ op(B) + beta * C,  all matrices row-major.
 *
 * dtype: TCGEMM_F16 (0) or TCGEMM_BF16 (1); A, B and C share it; accumulation
 * is fp32. op_a, op_b: TCGEMM_OP_N (0) or TCGEMM_OP_T (1). A T operand is stored
 * row-major in its transposed shape (op_a = T: A is stored K x M with lda >= M).
 * stream: a cudaStream_t, or NULL for the default stream.
 *
 * Returns TCGEMM_OK (0) on success, else one of the other tcgemm_status values
 * below; on failure nothing was written to C and tcgemm_last_error() says why.
 * The numbers of every constant below are part of the interface: they never
 * change, and new ones only get new numbers.
 * See tcgemm/tcgemm.hpp for the full contract (degenerate shapes, K or
 * alpha == 0, beta == 0, alignment, C apart from A and B).
 */
#ifndef TCGEMM_TCGEMM_H
#define TCGEMM_TCGEMM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return values of every function below (tcgemm::Status in tcgemm/tcgemm.hpp). */
enum tcgemm_status {
  TCGEMM_OK = 0,
  TCGEMM_INVALID_ARGUMENT = 1, /* a null pointer, a negative size or one past 2^31-1, a bad leading dimension, ... */
  TCGEMM_UNSUPPORTED = 2,      /* no kernel and no fallback for this device or request */
  TCGEMM_NO_DEVICE = 3,        /* no usable CUDA device: none visible, its properties or context unavailable */
  TCGEMM_CUDA_ERROR = 4        /* a CUDA, driver or cuBLAS call (or a host allocation) failed */
};

/* dtype: the element type of A, B and C (tcgemm::DType). */
enum tcgemm_dtype { TCGEMM_F16 = 0, TCGEMM_BF16 = 1 };

/* op_a, op_b (tcgemm::Op). */
enum tcgemm_op { TCGEMM_OP_N = 0, TCGEMM_OP_T = 1 };

/* bias_type of tcgemm_gemm_epilogue (tcgemm::BiasType). */
enum tcgemm_bias_type { TCGEMM_BIAS_SAME = 0, TCGEMM_BIAS_F32 = 1 };

/* activation of tcgemm_gemm_epilogue (tcgemm::Activation; the formulas are there). */
enum tcgemm_activation {
  TCGEMM_ACT_NONE = 0,
  TCGEMM_ACT_RELU = 1,
  TCGEMM_ACT_GELU = 2,      /* erf form */
  TCGEMM_ACT_GELU_TANH = 3, /* tanh approximation */
  TCGEMM_ACT_SILU = 4
};

int tcgemm_gemm(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha,
                const void* a, int64_t lda, const void* b, int64_t ldb, float beta, void* c,
                int64_t ldc, void* stream);

/* The same with a fused epilogue: C = act(alpha * op(A) @ op(B) + bias) + beta * C,
 * in fp32, rounded once (tcgemm/tcgemm.hpp, GemmArgs::bias). bias: N elements on
 * the device, added to every row, or NULL; bias_type: a tcgemm_bias_type
 * (TCGEMM_BIAS_SAME: the call's dtype, TCGEMM_BIAS_F32: fp32); activation: a
 * tcgemm_activation. tcgemm_gemm's signature is unchanged by it. */
int tcgemm_gemm_epilogue(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha,
                         const void* a, int64_t lda, const void* b, int64_t ldb, float beta, void* c,
                         int64_t ldc, const void* bias, int bias_type, int activation, void* stream);

/* A strided batch of independent GEMMs in one launch:
 *   C_i = alpha * op(A_i) @ op(B_i) + beta * C_i,  i = 0 .. batch-1,
 * A_i = a + i * stride_a elements (B_i, C_i likewise), each shaped and stored
 * as in tcgemm_gemm. stride_a or stride_b 0 uses one matrix for every batch;
 * C's matrices must not overlap (stride_c >= (m - 1) * ldc + n, or side by
 * side in C's rows: n <= stride_c and (batch - 1) * stride_c + n <= ldc).
 * batch >= 0: 0 writes nothing, 1 is tcgemm_gemm. Same return value and
 * tcgemm_last_error() as tcgemm_gemm (tcgemm/tcgemm.hpp, GemmArgs::batch). */
int tcgemm_gemm_strided_batched(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha,
                                const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb,
                                int64_t stride_b, float beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch,
                                void* stream);

/* An M-grouped GEMM (a mixture of experts: tokens sorted by expert) in one launch:
 *   C[rows of g] = alpha * A[rows of g] @ op(B_g) + beta * C[rows of g],  g = 0 .. groups-1,
 * where group g's rows of A (m x k, stored K-major: lda >= k) and of C (m x n)
 * are [g == 0 ? 0 : group_ends[g - 1], group_ends[g]) and B_g = b + g * stride_b
 * elements, stored as tcgemm_gemm's B (op_b 0: k x n, 1: n x k); stride_b 0
 * uses one B for every group. group_ends: `groups` nondecreasing int32 values
 * in device memory, read on the device (clamped into [0, m] there; ends that
 * still decrease make the call write nothing); rows at
 * or past the last end are not written. 1 <= groups <= 256. Same return value
 * and tcgemm_last_error() as tcgemm_gemm (tcgemm/tcgemm.hpp, GemmArgs::groups). */
int tcgemm_gemm_m_grouped(int dtype, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                          int64_t lda, const void* b, int64_t ldb, int64_t stride_b, float beta, void* c, int64_t ldc,
                          const int32_t* group_ends, int64_t groups, void* stream);

/* The reason for the last failed call of the functions above in this thread ("" if none
 * failed yet); successful calls leave it unchanged. The pointer stays valid
 * until the next failing call in this thread. */
const char* tcgemm_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TCGEMM_TCGEMM_H */
