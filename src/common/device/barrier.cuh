// Barrier waits shared by every kernel family: mbarrier phase waits and the
// cluster-wide barrier.
//
// Release builds spin on mbarrier.try_wait.parity (which suspends the thread
// in hardware between polls). With -DTCGEMM_DEBUG_HANGS=ON every wait is
// bounded: a barrier that does not complete within TCGEMM_HANG_TIMEOUT_MS
// (default 10 s) prints the waiting role, the barrier, its stage and phase,
// the block and thread, and traps, so a lost arrival becomes an error message
// instead of a hung GPU (tests/gpu/test_hang.cpp provokes one).
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda/ptx>

#include "common/device/ptx_wrappers.cuh"

namespace tcgemm::detail {

// Acquire at CTA scope (arrivals from this CTA, TMA completions) or, with
// CLUSTER, at cluster scope (arrivals released by the other CTA of a pair).
template <bool CLUSTER = false>
__device__ __forceinline__ bool try_wait_barrier(uint64_t* bar, uint32_t phase) {
  if constexpr (CLUSTER) {
    return cuda::ptx::mbarrier_try_wait_parity(cuda::ptx::sem_acquire, cuda::ptx::scope_cluster, bar, phase);
  } else {
    return cuda::ptx::mbarrier_try_wait_parity(bar, phase);
  }
}
// The same at CTA scope for a barrier named by its shared::cta address.
template <bool CLUSTER = false>
__device__ __forceinline__ bool try_wait_barrier(uint32_t bar, uint32_t phase) {
  static_assert(!CLUSTER, "a 32-bit shared::cta address names a barrier of this CTA: CTA scope");
  return mbarrier_try_wait_parity_shared(bar, phase);
}

#if !defined(TCGEMM_HANG_TIMEOUT_MS)
#define TCGEMM_HANG_TIMEOUT_MS 10000
#endif

// Waits until the barrier's phase with parity `phase` has completed. `bar`:
// a pointer, or a 32-bit shared::cta address (CTA scope). `role` (the waiting
// warp's part: "producer", "MMA", ...), `name` and `index` (the barrier and
// its stage or slot) only serve the hang report.
template <bool CLUSTER = false, typename Barrier>
__device__ __forceinline__ void wait_barrier(Barrier bar, uint32_t phase, const char* name, int index,
                                             const char* role) {
#if defined(TCGEMM_DEBUG_HANGS)
  // Bounded by wall time (the global nanosecond timer), checked every 1024
  // polls: a lost arrival becomes a report and a trap, not a hung GPU.
  uint64_t start = 0;
  for (uint32_t polls = 0; !try_wait_barrier<CLUSTER>(bar, phase); ++polls) {
    if ((polls & 1023) != 0) continue;
    uint64_t now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (start == 0) start = now;
    if (now - start > uint64_t{TCGEMM_HANG_TIMEOUT_MS} * 1000000) {
      // One line per waiting warp: its lanes expire together; the lowest
      // active one reports.
      if ((__activemask() & ((1u << (threadIdx.x % 32)) - 1)) == 0)
        printf("tcgemm: hang: %s waited %d ms for barrier %s[%d] (phase %u): block %d, thread %d (warp %d)\n", role,
               TCGEMM_HANG_TIMEOUT_MS, name, index, phase, static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x),
               static_cast<int>(threadIdx.x) / 32);
      __trap();
    }
  }
#else
  (void)name;
  (void)index;
  (void)role;
  while (!try_wait_barrier<CLUSTER>(bar, phase)) {
  }
#endif
}

// barrier.cluster arrive (release) + wait (acquire): every thread of every
// CTA of the cluster gets here before any goes on, and what each wrote
// before it (barrier inits, shared memory) is visible to all after it.
__device__ __forceinline__ void cluster_sync() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

// The cluster-wide barrier at a kernel's start, once one thread of each CTA
// has initialized the CTA's mbarriers and made the inits visible to the
// cluster (fence.mbarrier_init.release.cluster: init_barriers). Only those
// inits need ordering, and that fence orders them before a relaxed arrive;
// a release arrive (cluster_sync) orders every prior memory operation of
// every thread, which ptxas builds as MEMBAR.ALL.GPU + ERRBAR, and there 6%
// of a paired 1024 x 1536 x 1024 call's stall samples sat (docs/PERF.md,
// part 27). Nothing else written to shared memory before it may be read
// across it.
__device__ __forceinline__ void cluster_sync_after_init() {
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

}  // namespace tcgemm::detail
