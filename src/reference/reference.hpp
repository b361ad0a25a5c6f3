// Small generic kernels: the reference GEMM and the K == 0 scale.
#pragma once

#include <cuda_runtime_api.h>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// Launch on g.stream; arguments already validated.
cudaError_t launch_reference_gemm(const GemmArgs& g);
cudaError_t launch_scale(const GemmArgs& g);

// cudaSuccess when this library holds machine code (or PTX) the current
// device can run; cudaErrorNoKernelImageForDevice (or similar) when it was
// built for other architectures.
cudaError_t probe_kernel_image();

}  // namespace tcgemm::detail
