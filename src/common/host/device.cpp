#include "common/host/device.hpp"

#include <array>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "common/host/once_on_success.hpp"
#include "reference/reference.hpp"

namespace tcgemm::detail {

namespace {
std::array<DeviceInfo, kMaxDevices> g_devices;
// Filled once the facts are known: a failure that may pass (the probe's
// module load out of memory under a caching allocator) is asked again on the
// next call instead of being kept for the life of the process.
std::array<OnceOnSuccess, kMaxDevices> g_filled;

// Whether the probe's answer stands: it ran, or the build has no code for
// this device (which no later call changes).
bool image_answer_is_final(cudaError_t err) {
  return err == cudaSuccess || err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
         err == cudaErrorUnsupportedPtxVersion;
}

// Binds `dev`'s primary context when the thread has no current context
// (never replacing a context the caller made current), and says which
// context is current: its cuCtxGetId (0 where the driver cannot say).
cudaError_t bind_context_if_none(int dev, unsigned long long* context_id) {
  static const auto get_current = reinterpret_cast<PFN_cuCtxGetCurrent_v4000>(driver_entry_point("cuCtxGetCurrent"));
  static const auto get_id = reinterpret_cast<PFN_cuCtxGetId_v12000>(driver_entry_point("cuCtxGetId"));
  *context_id = 0;
  CUcontext ctx = nullptr;
  if (get_current == nullptr || get_current(&ctx) != CUDA_SUCCESS) return cudaSuccess;
  if (ctx == nullptr) {
    if (const cudaError_t err = cudaSetDevice(dev); err != cudaSuccess) return err;
    if (get_current(&ctx) != CUDA_SUCCESS) return cudaSuccess;
  }
  if (get_id == nullptr || get_id(ctx, context_id) != CUDA_SUCCESS) *context_id = 0;
  return cudaSuccess;
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

const DeviceInfo* current_device(std::string* error, Status* status) {
  if (status != nullptr) *status = Status::no_device;
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
  unsigned long long context_id = 0;
  if (const cudaError_t err = bind_context_if_none(dev, &context_id); err != cudaSuccess) {
    cudaGetLastError();
    *error = "no CUDA context is current and device " + std::to_string(dev) +
             "'s primary context could not be made current (" + cudaGetErrorString(err) + ")";
    return nullptr;
  }
  const bool filled = g_filled[dev].run([&] {
    DeviceInfo& d = g_devices[dev];
    d.id = dev;
    d.context_id = context_id;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
      d.name = prop.name;
      d.cc_major = prop.major;
      d.cc_minor = prop.minor;
      d.num_sms = prop.multiProcessorCount;
      d.l2_bytes = prop.l2CacheSize;
    }
    d.image = probe_kernel_image();
    cudaGetLastError();
    if (d.num_sms == 0) {
      *error = "cudaGetDeviceProperties failed for device " + std::to_string(dev);
      return false;
    }
    if (!image_answer_is_final(d.image)) {
      *error = std::string("loading tcgemm's code on device ") + std::to_string(dev) +
               " failed: " + cudaGetErrorString(d.image) + " (asked again on the next call)";
      if (status != nullptr) *status = Status::cuda_error;
      return false;
    }
    return true;
  });
  if (!filled) return nullptr;
  // Kernel setup is kept per device but made in a context: after
  // cudaDeviceReset, or under another context of the device, it is not there
  // (launches would fail, or cuBLAS handles point into a destroyed context).
  const DeviceInfo& d = g_devices[dev];
  if (context_id != d.context_id) {
    *error = "device " + std::to_string(dev) + "'s current CUDA context is not the one of tcgemm's first call " +
             "there, which its setup belongs to (cudaDeviceReset since, or another context of the device): " +
             "not supported";
    if (status != nullptr) *status = Status::unsupported;
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
