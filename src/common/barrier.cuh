// mbarrier waits shared by every kernel family.
//
// Release builds spin on mbarrier.try_wait.parity (which suspends the thread
// in hardware between polls). With -DTCGEMM_DEBUG_HANGS=ON every wait is
// bounded: a barrier that does not complete within ~2^26 polls prints which
// barrier, stage and phase it was and traps, so a lost arrival becomes an
// error message instead of a hung GPU.
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda/ptx>

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

template <bool CLUSTER = false>
__device__ __forceinline__ void wait_barrier(uint64_t* bar, uint32_t phase, const char* name, int index) {
#if defined(TCGEMM_DEBUG_HANGS)
  for (uint32_t polls = 0; !try_wait_barrier<CLUSTER>(bar, phase); ++polls) {
    if (polls == (1u << 26)) {
      printf("tcgemm: barrier %s[%d] (phase %u) never completed: block %d thread %d\n", name, index, phase,
             static_cast<int>(blockIdx.x), static_cast<int>(threadIdx.x));
      __trap();
    }
  }
#else
  (void)name;
  (void)index;
  while (!try_wait_barrier<CLUSTER>(bar, phase)) {
  }
#endif
}

}  // namespace tcgemm::detail
