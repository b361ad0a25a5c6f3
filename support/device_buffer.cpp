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

namespace tcgemm::support {

void L2Flusher::flush(cudaStream_t stream) {
  // A different byte each time, so no layer can treat the write as a no-op.
  check_cuda(cudaMemsetAsync(scratch_.data(), value_++, scratch_.bytes(), stream), "L2 flush");
}

}  // namespace tcgemm::support
