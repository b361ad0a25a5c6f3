#include "common/host/device.hpp"

#include <array>
#include <mutex>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "reference/reference.hpp"

namespace tcgemm::detail {

namespace {
std::array<DeviceInfo, kMaxDevices> g_devices;
std::array<std::once_flag, kMaxDevices> g_once;

// Binds `dev`'s primary context when the thread has no current context.
// Never replaces a context the caller made current.
cudaError_t bind_context_if_none(int dev) {
  static const auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(driver_entry_point("cuCtxGetCurrent"));
  CUcontext ctx = nullptr;
  if (get_current == nullptr || get_current(&ctx) != CUDA_SUCCESS || ctx != nullptr) return cudaSuccess;
  return cudaSetDevice(dev);
}
}  // namespace

void* driver_entry_point(const char* symbol, int abi_version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, abi_version, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return fn;
}

const DeviceInfo* current_device(std::string* error) {
  int dev = -1;
  // cudaGetDevice fails without a usable driver or device; only then is the
  // device count asked for, to say which (this runs on every call).
  if (cudaGetDevice(&dev) != cudaSuccess) {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    cudaGetLastError();  // do not leave a sticky-looking error behind
    *error = std::string("no CUDA device is visible (") +
             (err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDevice failed") + ")";
    return nullptr;
  }
  if (dev < 0 || dev >= kMaxDevices) {
    *error = "device index " + std::to_string(dev) + " is beyond the " + std::to_string(kMaxDevices) + " supported";
    return nullptr;
  }
  if (const cudaError_t err = bind_context_if_none(dev); err != cudaSuccess) {
    cudaGetLastError();
    *error = "no CUDA context is current and device " + std::to_string(dev) +
             "'s primary context could not be made current (" + cudaGetErrorString(err) + ")";
    return nullptr;
  }
  std::call_once(g_once[dev], [dev] {
    DeviceInfo& d = g_devices[dev];
    d.id = dev;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
      d.name = prop.name;
      d.cc_major = prop.major;
      d.cc_minor = prop.minor;
      d.num_sms = prop.multiProcessorCount;
    }
    d.image = probe_kernel_image();
    cudaGetLastError();
  });
  const DeviceInfo& d = g_devices[dev];
  if (d.num_sms == 0) {
    *error = "cudaGetDeviceProperties failed for device " + std::to_string(dev);
    return nullptr;
  }
  return &d;
}

std::string check_device_pointer(const char* name, const void* ptr, int device) {
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string(name) + " is not a pointer CUDA knows (" + cudaGetErrorString(err) + ")";
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      // (Another GPU's memory would fault in the kernel, sticky for the context.)
      if (attr.device != device)
        return std::string(name) + " is memory of device " + std::to_string(attr.device) + ", and the call runs on " +
               "device " + std::to_string(device) + " (the current device)";
      return {};
    case cudaMemoryTypeManaged:
      return {};
    case cudaMemoryTypeHost:
      return std::string(name) + " is pinned host memory; tcgemm needs device memory";
    default:
      return std::string(name) + " is host memory, not device memory";
  }
}

std::string check_stream(cudaStream_t stream, int device) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return {};
  // NOTE: not cudaStreamGetDevice (nor cuStreamGetDevice, cudaStreamGetFlags,
  // cudaStreamGetId): on a stream that is being captured they fail with
  // cudaErrorStreamCaptureUnsupported and invalidate the capture, in every
  // capture mode. The stream's context and that context's device are legal
  // to ask for while capturing (see the capture rule in device.hpp).
  static const auto stream_context =
      reinterpret_cast<PFN_cuStreamGetCtx_v9020>(driver_entry_point("cuStreamGetCtx"));
  static const auto context_device =
      reinterpret_cast<PFN_cuCtxGetDevice_v13000>(driver_entry_point("cuCtxGetDevice", 13000));
  if (stream_context == nullptr || context_device == nullptr)
    return "the CUDA driver lacks cuStreamGetCtx or cuCtxGetDevice (CUDA 13): it cannot say which device the stream "
           "belongs to";
  CUcontext ctx = nullptr;
  CUdevice owner = -1;
  CUresult res = stream_context(reinterpret_cast<CUstream>(stream), &ctx);
  if (res == CUDA_SUCCESS) res = context_device(&owner, ctx);
  if (res != CUDA_SUCCESS) {
    const char* name = nullptr;
    static const auto error_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(driver_entry_point("cuGetErrorName"));
    if (error_name == nullptr || error_name(res, &name) != CUDA_SUCCESS) name = "unknown driver error";
    return std::string("the stream is not a usable CUDA stream (") + name + ")";
  }
  if (owner != device)
    return "the stream belongs to device " + std::to_string(owner) + ", but device " + std::to_string(device) +
           " is current (the kernel would run on the current one)";
  return {};
}

}  // namespace tcgemm::detail
