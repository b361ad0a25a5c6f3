// Small helpers the host test suites share.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace tcgemm::test {

// Whether `s` contains `part` (refusal messages are checked by their parts).
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Whether the CUDA runtime sees no device (no driver counts as none): the
// host tests that check what a call says without a GPU skip where one is.
inline bool no_cuda_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  cudaGetLastError();
  return err != cudaSuccess || count == 0;
}

}  // namespace tcgemm::test
