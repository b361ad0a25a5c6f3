// Whether the CUDA runtime sees no device (no driver counts as none): the
// host tests that check what a call says without a GPU skip where one is.
#pragma once

#include <cuda_runtime_api.h>

namespace tcgemm::test {

inline bool no_cuda_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return err != cudaSuccess || count == 0;
}

}  // namespace tcgemm::test
