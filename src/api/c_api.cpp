// The C ABI (include/tcgemm/tcgemm.h): a published signature, kept exactly.
#include <string>

#include "api/c_abi_args.hpp"
#include "common/host/validate.hpp"
#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"

namespace {
thread_local std::string g_last_error;

// The C header's constants are the C++ enums' values, one by one.
template <typename E>
constexpr bool same_value(E e, int c) {
  return static_cast<int>(e) == c;
}
static_assert(same_value(tcgemm::Status::ok, TCGEMM_OK) &&
              same_value(tcgemm::Status::invalid_argument, TCGEMM_INVALID_ARGUMENT) &&
              same_value(tcgemm::Status::unsupported, TCGEMM_UNSUPPORTED) &&
              same_value(tcgemm::Status::no_device, TCGEMM_NO_DEVICE) &&
              same_value(tcgemm::Status::cuda_error, TCGEMM_CUDA_ERROR));
static_assert(same_value(tcgemm::DType::f16, TCGEMM_F16) && same_value(tcgemm::DType::bf16, TCGEMM_BF16));
static_assert(same_value(tcgemm::Op::N, TCGEMM_OP_N) && same_value(tcgemm::Op::T, TCGEMM_OP_T));
static_assert(same_value(tcgemm::BiasType::same, TCGEMM_BIAS_SAME) &&
              same_value(tcgemm::BiasType::f32, TCGEMM_BIAS_F32));
static_assert(same_value(tcgemm::Activation::none, TCGEMM_ACT_NONE) &&
              same_value(tcgemm::Activation::relu, TCGEMM_ACT_RELU) &&
              same_value(tcgemm::Activation::gelu, TCGEMM_ACT_GELU) &&
              same_value(tcgemm::Activation::gelu_tanh, TCGEMM_ACT_GELU_TANH) &&
              same_value(tcgemm::Activation::silu, TCGEMM_ACT_SILU));
}  // namespace

namespace {
// Runs a call of the C ABI, keeping the reason of a failure for tcgemm_last_error().
int run(const tcgemm::GemmArgs& args) {
  const tcgemm::Plan p = tcgemm::gemm(args);
  if (p.status != tcgemm::Status::ok) {
    try {
      g_last_error = p.reason;
    } catch (...) {
      g_last_error.clear();
    }
  }
  return static_cast<int>(p.status);
}
}  // namespace

extern "C" int tcgemm_gemm(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                           int64_t lda, const void* b, int64_t ldb, float beta, void* c, int64_t ldc, void* stream) {
  return run(tcgemm::detail::c_abi_args(dtype, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream));
}

extern "C" int tcgemm_gemm_epilogue(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha,
                                    const void* a, int64_t lda, const void* b, int64_t ldb, float beta, void* c,
                                    int64_t ldc, const void* bias, int bias_type, int activation, void* stream) {
  tcgemm::GemmArgs args =
      tcgemm::detail::c_abi_args(dtype, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
  args.bias = bias;
  args.bias_type = static_cast<tcgemm::BiasType>(bias_type);
  args.activation = static_cast<tcgemm::Activation>(activation);
  return run(args);
}

extern "C" int tcgemm_gemm_strided_batched(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k,
                                           float alpha, const void* a, int64_t lda, int64_t stride_a, const void* b,
                                           int64_t ldb, int64_t stride_b, float beta, void* c, int64_t ldc,
                                           int64_t stride_c, int64_t batch, void* stream) {
  return run(tcgemm::detail::c_abi_strided_batched_args(dtype, op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                                        stride_b, beta, c, ldc, stride_c, batch, stream));
}

extern "C" int tcgemm_gemm_m_grouped(int dtype, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                                     int64_t lda, const void* b, int64_t ldb, int64_t stride_b, float beta, void* c,
                                     int64_t ldc, const int32_t* group_ends, int64_t groups, void* stream) {
  const tcgemm::GemmArgs args = tcgemm::detail::c_abi_m_grouped_args(dtype, op_b, m, n, k, alpha, a, lda, b, ldb,
                                                                     stride_b, beta, c, ldc, group_ends, groups,
                                                                     stream);
  // (GemmArgs::groups = 0 is a plain call; this entry point always has groups.)
  if (groups == 0) {
    try {
      g_last_error = "tcgemm: tcgemm_gemm_m_grouped needs 1 to " + std::to_string(tcgemm::kMaxGroups) +
                     " groups, not 0 (tcgemm_gemm computes a product without groups) (" +
                     tcgemm::detail::describe(args) + " groups=0 stride_b=" + std::to_string(stride_b) + ")";
    } catch (...) {
      g_last_error.clear();
    }
    return static_cast<int>(tcgemm::Status::invalid_argument);
  }
  return run(args);
}

extern "C" const char* tcgemm_last_error(void) { return g_last_error.c_str(); }
