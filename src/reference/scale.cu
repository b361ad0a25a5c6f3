// C = beta * C for K == 0 (no products to add); with a fused epilogue,
// C = act(bias) + beta * C; for each C of a strided batch; for the rows of
// an M-grouped call's groups (a row in none is left as it is). beta == 0 writes without reading C, as BLAS does.
#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/epilogue.cuh"
#include "common/m_groups.hpp"
#include "reference/reference.hpp"

namespace tcgemm::detail {

namespace {
// A strided batch: the grid's z index strides over the C matrices (gridDim.z
// is capped at 65535), stride_c elements apart.
template <typename T>
__global__ void scale_kernel(int64_t m, int64_t n, EpilogueParams epi, int64_t batch, int64_t stride_c,
                             MGroups groups) {
  T* const c0 = static_cast<T*>(epi.c);
  const int64_t ldc = epi.ldc;
  const float beta = epi.beta;
  const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (col >= n) return;
  // With a fused epilogue: act(bias[col]) + beta * C (no product: epi.alpha
  // is 1 here, launch_scale).
  const bool fused = fused_epilogue(epi);
  const float x = fused ? epilogue_value<T>(epi, 0.0f, static_cast<int>(col)) : 0.0f;
  for (int64_t i = blockIdx.z; i < batch; i += gridDim.z) {
    T* c = c0 + i * stride_c;
    for (int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < m;
         row += static_cast<int64_t>(gridDim.y) * blockDim.y) {
      if (groups.count > 0 && group_of_row(groups, row) < 0) continue;
      T* p = c + row * ldc + col;
      if (fused) *p = round_to<T>(beta == 0.0f ? x : fmaf(beta, widen(*p), x));
      else *p = round_to<T>(beta == 0.0f ? 0.0f : beta * widen(*p));
    }
  }
}
}  // namespace

cudaError_t launch_scale(const GemmArgs& g) {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((g.n + 31) / 32), static_cast<unsigned>(std::min<int64_t>((g.m + 7) / 8, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(g.batch, 65535)));
  // K or alpha is 0: the product is absent, not alpha times 0 (an infinite
  // or NaN alpha would make it NaN); a fused epilogue adds the bias to 0.
  EpilogueParams epi = epilogue_params(g);
  epi.alpha = 1.0f;
  const MGroups groups{g.group_ends, static_cast<int>(g.groups), static_cast<int>(g.m)};
  // (The launch's own status: not cudaGetLastError, which would report, and
  // clear, an earlier failure of the caller's.)
  const cudaLaunchConfig_t cfg{grid, block, 0, g.stream, nullptr, 0};
  if (g.dtype == DType::f16)
    return cudaLaunchKernelEx(&cfg, scale_kernel<__half>, g.m, g.n, epi, g.batch, g.stride_c, groups);
  return cudaLaunchKernelEx(&cfg, scale_kernel<__nv_bfloat16>, g.m, g.n, epi, g.batch, g.stride_c, groups);
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, scale_kernel<__half>);
}

}  // namespace tcgemm::detail
