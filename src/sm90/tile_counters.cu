// The counters of counted tiles (Schedule::counted, sm90/tile_counter.cuh):
// a pool of two-word counters in the library's own device memory (zero when
// the module loads; every kernel that uses one leaves it zero), handed out
// so that no two grids that may run at once share one:
//   - a call on a stream that is not being captured uses its stream's
//     counter (streams told apart by cudaStreamGetId, which no other stream
//     of the process ever reuses): the stream runs its kernels one after
//     another, and a programmatic dependent launch waits for the previous
//     grid before it takes a tile;
//   - a call being captured into a CUDA graph gets a counter of its own,
//     kept for the life of the process: every launch of the graph uses it,
//     and the launches of one executable graph run one after another.
// Two executable graphs instantiated from the same capture, launched so
// that they overlap, would share a counter: like a cuBLAS workspace captured
// into a graph, a capture must not run concurrently with a copy of itself.
// When the pool runs out (kTileCounterSlots streams and captured calls),
// calls take the static schedule: the same bits, the speed of
// Schedule::persistent.
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include <cuda_runtime.h>

#include "common/host/device.hpp"
#include "sm90/tile_counters.hpp"

namespace tcgemm::sm90 {

namespace {

constexpr int kTileCounterSlots = 8192;

__device__ uint32_t g_tile_counters[2 * kTileCounterSlots];

struct DevicePool {
  std::mutex mutex;
  uint32_t* base = nullptr;  // g_tile_counters on this device
  bool failed = false;       // its address could not be had: counted tiles are off
  std::unordered_map<unsigned long long, int> stream_slot;
  int next_slot = 0;
};

DevicePool& pool_of(int device) {
  static DevicePool pools[detail::kMaxDevices];
  return pools[device];
}

}  // namespace

uint32_t* tile_counter(int device, cudaStream_t stream) {
  if (device < 0 || device >= detail::kMaxDevices) return nullptr;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  unsigned long long id = 0;
  if (capture == cudaStreamCaptureStatusNone && cudaStreamGetId(stream, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  DevicePool& pool = pool_of(device);
  std::lock_guard<std::mutex> lock(pool.mutex);
  if (pool.base == nullptr && !pool.failed) {
    // (The first use of this file's module loads it, which may allocate: in
    // relaxed mode, so that a first call made under capture does not
    // invalidate the capture. detail::RelaxedCaptureMode.)
    const detail::RelaxedCaptureMode relaxed;
    void* base = nullptr;
    if (cudaGetSymbolAddress(&base, g_tile_counters) == cudaSuccess) {
      pool.base = static_cast<uint32_t*>(base);
    } else {
      (void)cudaGetLastError();
      pool.failed = true;
    }
  }
  if (pool.base == nullptr) return nullptr;
  int slot = -1;
  if (capture == cudaStreamCaptureStatusNone) {
    if (const auto it = pool.stream_slot.find(id); it != pool.stream_slot.end()) slot = it->second;
    else if (pool.next_slot < kTileCounterSlots) slot = pool.stream_slot[id] = pool.next_slot++;
  } else if (pool.next_slot < kTileCounterSlots) {
    slot = pool.next_slot++;
  }
  return slot < 0 ? nullptr : pool.base + 2 * slot;
}

}  // namespace tcgemm::sm90
