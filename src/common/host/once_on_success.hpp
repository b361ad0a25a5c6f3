// A one-time initialization that keeps only success: where std::call_once
// would keep a failure for the life of the process (a kernel's first load out
// of device memory, say), this runs the fill again on the next call. The
// device facts and each kernel's setup (shared-memory opt-in, occupancy) use
// it.
#pragma once

#include <atomic>
#include <mutex>

namespace tcgemm::detail {

class OnceOnSuccess {
 public:
  // Unless a run of a fill has succeeded, runs `fill` (returning true on
  // success) under the lock, one thread at a time. Returns whether the state
  // it fills is ready: after true, what the successful run wrote is visible
  // and is never written again.
  template <typename Fill>
  bool run(Fill&& fill) {
    if (done_.load(std::memory_order_acquire)) return true;
    const std::lock_guard<std::mutex> lock(fill_);
    if (done_.load(std::memory_order_relaxed)) return true;
    if (!fill()) return false;
    done_.store(true, std::memory_order_release);
    return true;
  }

 private:
  std::mutex fill_;
  std::atomic<bool> done_{false};
};

}  // namespace tcgemm::detail
