// The C ABI (include/tcgemm/tcgemm.h): a published signature, kept exactly.
#include <string>

#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"

namespace {
thread_local std::string g_last_error;
}

extern "C" int tcgemm_gemm(int dtype, int op_a, int op_b, int64_t m, int64_t n, int64_t k, float alpha, const void* a,
                           int64_t lda, const void* b, int64_t ldb, float beta, void* c, int64_t ldc, void* stream) {
  tcgemm::GemmArgs args;
  // Out-of-range enum values are carried through and rejected by validation
  // with a message that names them.
  args.dtype = static_cast<tcgemm::DType>(dtype);
  args.op_a = static_cast<tcgemm::Op>(op_a);
  args.op_b = static_cast<tcgemm::Op>(op_b);
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

extern "C" const char* tcgemm_last_error(void) { return g_last_error.c_str(); }
