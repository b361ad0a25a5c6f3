// C = beta * C for K == 0 (no products to add). beta == 0 writes zeros
// without reading C, as BLAS does.
#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "reference/reference.hpp"

namespace tcgemm::detail {

namespace {
template <typename T>
__global__ void scale_kernel(int64_t m, int64_t n, float beta, T* c, int64_t ldc) {
  const int64_t col = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (col >= n) return;
  for (int64_t row = blockIdx.y * static_cast<int64_t>(blockDim.y) + threadIdx.y; row < m;
       row += static_cast<int64_t>(gridDim.y) * blockDim.y) {
    T* p = c + row * ldc + col;
    if constexpr (std::is_same_v<T, __half>) *p = __float2half_rn(beta == 0.0f ? 0.0f : beta * __half2float(*p));
    else *p = __float2bfloat16_rn(beta == 0.0f ? 0.0f : beta * __bfloat162float(*p));
  }
}
}  // namespace

cudaError_t launch_scale(const GemmArgs& g) {
  const dim3 block(32, 8);
  const dim3 grid(static_cast<unsigned>((g.n + 31) / 32), static_cast<unsigned>(std::min<int64_t>((g.m + 7) / 8, 65535)));
  if (g.dtype == DType::f16)
    scale_kernel<<<grid, block, 0, g.stream>>>(g.m, g.n, g.beta, static_cast<__half*>(g.c), g.ldc);
  else
    scale_kernel<<<grid, block, 0, g.stream>>>(g.m, g.n, g.beta, static_cast<__nv_bfloat16*>(g.c), g.ldc);
  return cudaGetLastError();
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attr{};
  return cudaFuncGetAttributes(&attr, scale_kernel<__half>);
}

}  // namespace tcgemm::detail
