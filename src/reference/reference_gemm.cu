// The reference GEMM: one thread per output element, fp32 accumulation one
// product at a time in K order (fmaf), any layout, any alignment, any strided
// batch, an M-grouped call, and the
// fused epilogue (bias, activation) in the same fp32 steps as the kernels. Slow and
// obviously correct; tests and `tcgemm check` compare everything against it.
#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/epilogue.cuh"
#include "common/m_groups.hpp"
#include "reference/reference.hpp"

namespace tcgemm::detail {

namespace {

// A strided batch: the grid's z index strides over the problems (gridDim.z
// is capped at 65535), each with its own A, B and C. An M-grouped call
// (groups.count > 0): each row takes its group's B (b0 + g * stride_b), and
// a row in no group is left as it is.
template <typename T>
__global__ void reference_gemm_kernel(int op_a, int op_b, int64_t m, int64_t n, int64_t k, const T* a0, int64_t lda,
                                      const T* b0, int64_t ldb, EpilogueParams epi, int64_t batch, int64_t stride_a,
                                      int64_t stride_b, int64_t stride_c, MGroups groups) {
  // (alpha, beta, C and ldc: the epilogue's.)
  T* const c0 = static_cast<T*>(epi.c);
  const int64_t ldc = epi.ldc;
  const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (col >= n) return;
  for (int64_t i = blockIdx.z; i < batch; i += gridDim.z) {
    const T* a = a0 + i * stride_a;
    const T* b = b0 + i * stride_b;  // (an M-grouped call: the row's group's, below)
    T* c = c0 + i * stride_c;
    // Rows stride over the grid: gridDim.y is capped at 65535.
    for (int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < m;
         row += static_cast<int64_t>(gridDim.y) * blockDim.y) {
      if (groups.count > 0) {
        const int g = group_of_row(groups, row);
        if (g < 0) continue;
        b = b0 + g * stride_b;
      }
      float acc = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float x = widen(a[op_a == 0 ? row * lda + kk : kk * lda + row]);
        const float y = widen(b[op_b == 0 ? kk * ldb + col : col * ldb + kk]);
        acc = fmaf(x, y, acc);
      }
      // The fused epilogue (bias, activation), as the kernels apply it.
      float out = fused_epilogue(epi) ? epilogue_value<T>(epi, acc, static_cast<int>(col)) : epi.alpha * acc;
      if (epi.beta != 0.0f) out = fmaf(epi.beta, widen(c[row * ldc + col]), out);
      c[row * ldc + col] = round_to<T>(out);
    }
  }
}

}  // namespace

cudaError_t launch_reference_gemm(const GemmArgs& g) {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((g.n + 31) / 32), static_cast<unsigned>(std::min<int64_t>((g.m + 7) / 8, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(g.batch, 65535)));
  const int oa = static_cast<int>(g.op_a), ob = static_cast<int>(g.op_b);
  // (Element-wise stores: an M-grouped call's one C needs no batch.)
  EpilogueParams epi = epilogue_params(g);
  epi.batched = 0;
  // K == 0: no product, so no alpha (as the library's scale: an infinite
  // alpha times the empty sum would make NaN).
  if (g.k == 0) epi.alpha = 1.0f;
  const MGroups groups{g.group_ends, static_cast<int>(g.groups), static_cast<int>(g.m)};
  // (The launch's own status, as launch_scale's.)
  const cudaLaunchConfig_t cfg{grid, block, 0, g.stream, nullptr, 0};
  if (g.dtype == DType::f16)
    return cudaLaunchKernelEx(&cfg, reference_gemm_kernel<__half>, oa, ob, g.m, g.n, g.k,
                              static_cast<const __half*>(g.a), g.lda, static_cast<const __half*>(g.b), g.ldb, epi,
                              g.batch, g.stride_a, g.stride_b, g.stride_c, groups);
  return cudaLaunchKernelEx(&cfg, reference_gemm_kernel<__nv_bfloat16>, oa, ob, g.m, g.n, g.k,
                            static_cast<const __nv_bfloat16*>(g.a), g.lda, static_cast<const __nv_bfloat16*>(g.b),
                            g.ldb, epi, g.batch, g.stride_a, g.stride_b, g.stride_c, groups);
}

}  // namespace tcgemm::detail
