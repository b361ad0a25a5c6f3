// What the library needs to know about the current CUDA device, queried once
// per device and cached, and the memory kind of user pointers.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

namespace tcgemm::detail {

struct DeviceInfo {
  int id = -1;
  int cc_major = 0, cc_minor = 0;
  int num_sms = 0;
  std::string name;
  cudaError_t image = cudaSuccess;  // probe_kernel_image() on this device
};

// The current device's info; on failure `error` is set and says why (no
// device visible, driver too old, ...). A thread with no CUDA context current
// (one unset or popped through the driver API) gets the device's primary
// context bound again, as the runtime's first call on a thread would do:
// tcgemm's driver calls (tensor-map encoding) need one.
const DeviceInfo* current_device(std::string* error);

// A driver API function by name (CUDA 12.0 ABI) through the runtime, so that
// the library does not link libcuda; nullptr when the driver lacks it.
void* driver_entry_point(const char* symbol);

// Empty when `ptr` is device (or managed) memory usable by kernels; otherwise
// e.g. "A is host memory (not device memory)".
std::string check_device_pointer(const char* name, const void* ptr);
// Empty when kernels launched on `stream` run on `device` (the current one):
// the default, legacy and per-thread streams, or a stream created on it.
// Otherwise e.g. "the stream belongs to device 1, but device 0 is current".
std::string check_stream(cudaStream_t stream, int device);

}  // namespace tcgemm::detail
