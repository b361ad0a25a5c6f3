#include "support/device_buffer.hpp"

#include <cstdio>

namespace tcgemm::support::detail {

void* device_alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err != cudaSuccess) {
    char what[64];
    std::snprintf(what, sizeof what, "cudaMalloc of %.1f MiB", static_cast<double>(bytes) / 1048576.0);
    throw_cuda_error(err, what);
  }
  return ptr;
}

void device_free(void* ptr) noexcept {
  if (ptr != nullptr) static_cast<void>(cudaFree(ptr));
}

}  // namespace tcgemm::support::detail
