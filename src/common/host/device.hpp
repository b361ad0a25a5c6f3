// What the library needs to know about the current CUDA device, queried once
// per device and cached, and the memory kind of user pointers.
//
// NOTE: the capture rule. Every call of tcgemm::gemm / tcgemm_gemm may be
// issued while its stream is being captured into a CUDA graph, in any capture
// mode (global, thread_local, relaxed), and while another thread captures.
// A runtime or driver call on the launch path that capture forbids fails with
// cudaErrorStreamCaptureUnsupported and invalidates the caller's capture, so
// anyone adding one must check it against this list (each entry was tried
// under capture in all three modes on an H200, driver 580; tests/gpu/
// test_graphs.cpp captures every entry point):
//   legal, per call:  cudaGetDevice, cuCtxGetCurrent, cuCtxGetId, cudaPointerGetAttributes,
//                     cuStreamGetCtx, cuCtxGetDevice (v2, of a context),
//                     cudaStreamIsCapturing, cudaThreadExchangeStreamCaptureMode,
//                     cuTensorMapEncodeTiled, cudaLaunchKernelEx (cluster
//                     attribute), cudaGetLastError, cublasSetStream,
//                     cublasGemmEx (cuCtxGetId: added since, and tried by
//                     test_graphs.cpp in all three modes on an H100, driver 580)
//   legal, per call, on a stream not being captured only (counted tiles,
//   sm90/tile_counters.cu; tried by tests/gpu/test_counted.cpp, eager calls
//   beside a global-mode capture, H100, driver 580): cudaStreamGetId
//   legal, once (per device or kernel, until it succeeds):
//                     cudaGetDeviceProperties, cudaFuncGetAttributes,
//                     cudaFuncSetAttribute, cudaDeviceGetAttribute,
//                     cudaOccupancyMaxActiveClusters,
//                     cudaGetDriverEntryPointByVersion, cudaGetSymbolAddress
//                     (the counter pool's base: the first use of its module,
//                     made in relaxed mode, RelaxedCaptureMode below, as a
//                     load may allocate; its first call in the tests came
//                     before any capture: not tried under one)
//   forbidden:        cudaStreamGetDevice, cuStreamGetDevice,
//                     cudaStreamGetFlags, cudaStreamGetId (on the capturing
//                     stream); anything that synchronizes (cudaDeviceSynchronize,
//                     and so cublasDestroy), in any mode, while any stream is
//                     being captured; allocations (cudaMalloc, and so
//                     cublasCreate) and event queries, unless the calling
//                     thread is in relaxed mode (cudaThreadExchangeStreamCaptureMode:
//                     the cuBLAS fallback creates its handles so, and runs
//                     cuBLAS so on streams that are not being captured)
// Nothing else on the launch path allocates device memory, synchronizes, or
// records or queries events.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// Device indices the per-device caches (device facts, kernel setup, cuBLAS
// handles) hold room for.
inline constexpr int kMaxDevices = 64;

struct DeviceInfo {
  int id = -1;
  int cc_major = 0, cc_minor = 0;
  int num_sms = 0;
  std::string name;
  cudaError_t image = cudaSuccess;  // probe_kernel_image() on this device
  // The CUDA context the facts and every kernel's setup (shared-memory opt-in)
  // were made in: cuCtxGetId's, unique for the life of the process.
  unsigned long long context_id = 0;
  int64_t l2_bytes = 0;  // L2's size (0: not known: C is then never stored evict-first)
};

// The current device's info; on failure `error` is set and says why (no
// device visible, driver too old, ...). A thread with no CUDA context current
// (one unset or popped through the driver API) gets the device's primary
// context bound again, as the runtime's first call on a thread would do:
// tcgemm's driver calls (tensor-map encoding) need one. The facts are kept
// once known, with the context they were made in; a failure that may pass
// (loading tcgemm's code on the device out of memory) is not kept but asked
// again on the next call. *status (if given) classes a failure: no_device,
// cuda_error (that load), unsupported (another context than the first call's).
const DeviceInfo* current_device(std::string* error, Status* status = nullptr);

// A driver API function by name, in the ABI of CUDA `abi_version` (12000:
// 12.0), through the runtime, so that the library does not link libcuda;
// nullptr when the driver lacks it.
void* driver_entry_point(const char* symbol, int abi_version = 12000);

// Empty when `ptr` is memory of device `device` (or managed memory) usable by
// kernels; otherwise e.g. "A is host memory, not device memory".
std::string check_device_pointer(const char* name, const void* ptr, int device);
// Empty when kernels launched on `stream` run on `device` (the current one):
// the default, legacy and per-thread streams, or a stream created on it.
// Otherwise e.g. "the stream belongs to device 1, but device 0 is current".
std::string check_stream(cudaStream_t stream, int device);

// Sets this thread's stream capture mode to relaxed for its lifetime (the
// thread's previous mode comes back at the end of the scope): the once-only
// calls that capture would forbid in global mode (allocations, a module's
// first load) may then run while a stream is being captured, this call's
// own included, without invalidating the capture.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace tcgemm::detail
