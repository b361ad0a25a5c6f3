// Owned device memory, copies back to the host, and the L2 flush between
// timed launches. Failures throw CudaError.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "support/cuda_error.hpp"

namespace tcgemm::support {

namespace detail {
// cudaMalloc of `bytes`; nullptr for zero bytes. Throws, naming the size.
void* device_alloc(size_t bytes);
// cudaFree, errors dropped: it runs in destructors, also while a CudaError
// unwinds, and a sticky error resurfaces at the owner's next checked call.
void device_free(void* ptr) noexcept;
}  // namespace detail

// `count` elements of T in one cudaMalloc allocation, freed on destruction.
// fp16 and bf16 matrices are DeviceBuffer<uint16_t>: elements travel as raw
// bit patterns, so "bit-identical" means exactly that.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t count)
      : ptr_(static_cast<T*>(detail::device_alloc(count * sizeof(T)))), count_(count) {}
  ~DeviceBuffer() { detail::device_free(ptr_); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      detail::device_free(ptr_);
      ptr_ = std::exchange(other.ptr_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* data() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

// Copies `count` elements from the device and waits for `stream`, so the
// result is complete and any earlier fault on the stream throws here.
template <typename T>
std::vector<T> download(const T* device, size_t count, cudaStream_t stream = nullptr) {
  std::vector<T> host(count);
  if (count > 0) {
    check_cuda(cudaMemcpyAsync(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost, stream), "download");
    check_cuda(cudaStreamSynchronize(stream), "download");
  }
  return host;
}

}  // namespace tcgemm::support
