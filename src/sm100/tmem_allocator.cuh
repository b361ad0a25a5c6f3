// Tensor memory of a 2-SM MMA pair (or of one CTA's single-CTA MMAs):
// allocate, publish the address, and free it (tcgen05.alloc /
// relinquish_alloc_permit / dealloc with cta_group::2 or ::1, PTX ISA
// 9.7.16.7.1).
//
// With cta_group::2 the alloc is collective over one warp of each CTA of the
// pair: the two warps allocate the same columns in both CTAs' tensor memory
// (which the pair's MMAs address alike), each writing the address into its
// own CTA's shared memory. The PTX ISA requires the issuing warp to make sure
// the peer CTA has launched and is still active (otherwise the behaviour is
// undefined). So:
//
//   1. every thread of both CTAs passes a cluster barrier (the peer has
//      launched, and its barriers are initialized);
//   2. the MMA warp of each CTA allocates, then relinquishes the permit to
//      allocate (this CTA allocates nothing more);
//   3. the allocating warp and the warps that use the address meet at a named
//      barrier, fenced for tcgen05 on both sides, and read the address the
//      alloc wrote (a weak store, in the memory model's terms);
//   4. after the last tcgen05.ld of both CTAs (the epilogues fence before,
//      and everyone passes, the teardown cluster barrier) the allocating warp
//      of each CTA frees the columns.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/ptx_wrappers.cuh"
#include "sm100/sm100_config.hpp"

namespace tcgemm::sm100 {

// The named barrier of step 3 (0 is __syncthreads) and who meets there: the
// MMA warp and the 4 epilogue warps.
inline constexpr int kTmemBarrierId = 1;
inline constexpr int kTmemUsers = 32 * (1 + kEpilogueWarps);

template <uint32_t NUM_COLUMNS, int CTA_GROUP = kCtaGroup>
struct TmemAllocator {
  static_assert(CTA_GROUP == 1 || CTA_GROUP == 2, "tcgen05 groups one or two CTAs");
  static_assert(NUM_COLUMNS >= 32 && NUM_COLUMNS <= 512 && (NUM_COLUMNS & (NUM_COLUMNS - 1)) == 0,
                "tcgen05.alloc takes a power of two of at least 32 columns, at most 512");

  uint32_t* base_slot;  // shared memory that tcgen05.alloc writes the address to

  // Step 2, by one whole warp of each CTA (the same warp that frees), after
  // step 1.
  __device__ __forceinline__ void allocate() const {
    if constexpr (CTA_GROUP == 2) {
      cuda::ptx::tcgen05_alloc(cuda::ptx::cta_group_2, base_slot, NUM_COLUMNS);
      cuda::ptx::tcgen05_relinquish_alloc_permit(cuda::ptx::cta_group_2);
    } else {
      cuda::ptx::tcgen05_alloc(cuda::ptx::cta_group_1, base_slot, NUM_COLUMNS);
      cuda::ptx::tcgen05_relinquish_alloc_permit(cuda::ptx::cta_group_1);
    }
  }

  // Step 3: the allocating warp and every warp that uses the address, all
  // `threads` of them, call this; it returns the address.
  __device__ __forceinline__ uint32_t publish(int barrier_id, int threads) const {
    cuda::ptx::tcgen05_fence_before_thread_sync();
    detail::named_barrier_sync(barrier_id, threads);
    cuda::ptx::tcgen05_fence_after_thread_sync();
    return *reinterpret_cast<volatile uint32_t*>(base_slot);
  }

  // Step 4, by the allocating warp, after the teardown cluster barrier.
  __device__ __forceinline__ void deallocate(uint32_t base) const {
    cuda::ptx::tcgen05_fence_after_thread_sync();
    if constexpr (CTA_GROUP == 2) {
      cuda::ptx::tcgen05_dealloc(cuda::ptx::cta_group_2, base, NUM_COLUMNS);
    } else {
      cuda::ptx::tcgen05_dealloc(cuda::ptx::cta_group_1, base, NUM_COLUMNS);
    }
  }
};

}  // namespace tcgemm::sm100
