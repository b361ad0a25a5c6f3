#include "dispatch/cublas_fallback.hpp"

#include <array>
#include <mutex>
#include <optional>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "common/host/device.hpp"
#include "dispatch/cublas_call.hpp"

namespace tcgemm::detail {

namespace {

// cuBLAS handles not held by any thread, per device. A handle must not be used
// by two threads at once, so each thread holds its own (ThreadHandles) and
// gives it back here when it exits; the next new thread takes it. Handles are
// never destroyed:
// - a process whose threads come and go (pools, per-request threads) keeps as
//   many handles as it had threads at once, not one per thread it ever ran
//   (destroying them at thread exit also bounded that, but see below);
// - cublasDestroy synchronizes the device, which is illegal while any stream
//   of the process is being captured (it invalidated a capture of another
//   thread when a thread exited during it);
// - a graph captured on a thread that has exited may still run the kernels
//   that thread's handle set up.
// The handles go with the process.
struct HandlePool {
  std::mutex mutex;
  std::array<std::vector<cublasHandle_t>, kMaxDevices> free;
};
HandlePool& handle_pool() {
  static HandlePool* pool = new HandlePool;  // never destroyed: threads may exit after static destructors ran
  return *pool;
}

struct ThreadHandles {
  std::array<cublasHandle_t, kMaxDevices> handles{};
  ~ThreadHandles() {
    HandlePool& pool = handle_pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    for (int d = 0; d < kMaxDevices; ++d)
      if (handles[d] != nullptr) pool.free[d].push_back(handles[d]);
  }
};

cublasHandle_t handle_for(int device, cublasStatus_t* status) {
  thread_local ThreadHandles per_thread;
  auto& handles = per_thread.handles;
  *status = CUBLAS_STATUS_SUCCESS;
  if (device < 0 || device >= kMaxDevices) {
    *status = CUBLAS_STATUS_INVALID_VALUE;
    return nullptr;
  }
  if (handles[device] != nullptr) return handles[device];
  {
    HandlePool& pool = handle_pool();
    std::lock_guard<std::mutex> lock(pool.mutex);
    if (!pool.free[device].empty()) {
      handles[device] = pool.free[device].back();
      pool.free[device].pop_back();
      return handles[device];
    }
  }
  // cublasCreate allocates device memory, which a capture in global or
  // thread_local mode forbids (the call fails and invalidates the capture)
  // when a thread's first fallback call is captured, or runs while another
  // thread captures in global mode. The allocation belongs to the handle, not
  // to any graph: relaxed mode, for this thread and this call only.
  const RelaxedCaptureMode relaxed;
  cublasHandle_t h = nullptr;
  *status = cublasCreate(&h);
  if (*status != CUBLAS_STATUS_SUCCESS) return nullptr;
  cublasSetMathMode(h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                 CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION));
  handles[device] = h;
  return h;
}

// Whether `stream` is being captured. The legacy default stream cannot be;
// asking about it while another thread captures a blocking stream returns an
// error, which counts as "capturing" here (the conservative answer).
bool is_capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace

std::string cublas_gemm(const GemmArgs& g) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "cudaGetDevice failed";
  cublasStatus_t st{};
  cublasHandle_t h = handle_for(device, &st);
  if (h == nullptr) return std::string("cublasCreate failed: ") + cublasGetStatusString(st);
  // On a stream that is not being captured, cuBLAS polls its own events
  // (cudaEventQuery), which a global-mode capture on another thread forbids to
  // every thread. Those calls cannot touch that capture: relaxed mode for
  // this thread. A capturing stream keeps the caller's mode, so that anything
  // the capture cannot record still fails loudly.
  std::optional<RelaxedCaptureMode> relaxed;
  if (!is_capturing(g.stream)) relaxed.emplace();
  st = cublasSetStream(h, g.stream);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasSetStream failed: ") + cublasGetStatusString(st);
  st = g.batch > 1 ? cublas_gemm_strided_batched_ex(h, g) : cublas_gemm_ex(h, g);
  if (st != CUBLAS_STATUS_SUCCESS) return std::string(cublas_kernel_name(g)) + " failed: " + cublasGetStatusString(st);
  return {};
}

}  // namespace tcgemm::detail
