// The sm100 producer's work on one stage of the operand ring: in each CTA of
// the pair, TMA loads of its 128 rows of A's k-block and its half of B's
// (cta_group::2 loads, sm100/tcgen05.cuh), whose bytes complete the stage's
// full barrier in the leader CTA. The leader's producer arms that barrier
// with the bytes of both CTAs; the MMA issuer waits on it alone.
//
// Layouts: a K-major operand is one box (K contiguous, 64 wide: one 128-byte
// swizzle line); an MN-major one is loaded in 64-wide panels of M or N, each
// spanning the k-block's 64 lines (common/smem_layout.hpp).
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "common/device/barrier.cuh"
#include "common/device/ring_state.cuh"
#include "sm100/shared_storage.cuh"
#include "sm100/tcgen05.cuh"

namespace tcgemm::sm100 {

template <int BLOCK_N, Major A_MAJOR, Major B_MAJOR>
struct MainloopLoad {
  using Stage = StageLayout<BLOCK_N>;
  static constexpr int kBCols = Stage::kBCols;

  const CUtensorMap* tmap_a;
  const CUtensorMap* tmap_b;

  // The k-block at k0 of this CTA's rows from m0 and B columns from n0, into
  // the stage at `a_dst`. `full`: this CTA's smem_full of the stage (armed
  // here in the leader), `leader_full`: the leader's, as a shared::cluster
  // address (where both CTAs' bytes land).
  __device__ __forceinline__ void operator()(uint8_t* a_dst, uint64_t* full, uint32_t leader_full, bool leader,
                                             int m0, int n0, int k0) const {
    // NOTE: TMA counts whole boxes, zero-filled parts included, so the byte
    // count is the same for edge tiles.
    if (leader)
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, full,
                                           kCtaGroup * Stage::kStageBytes);
    uint8_t* b_dst = a_dst + Stage::kABytes;
    if constexpr (A_MAJOR == Major::K) {
      tma_load_2d_pair(a_dst, tmap_a, k0, m0, leader_full);
    } else {
#pragma unroll
      for (int p = 0; p < kBlockM / 64; ++p)
        tma_load_2d_pair(a_dst + p * (Stage::kABytes / 2), tmap_a, m0 + 64 * p, k0, leader_full);
    }
    if constexpr (B_MAJOR == Major::K) {
      tma_load_2d_pair(b_dst, tmap_b, k0, n0, leader_full);
    } else {
#pragma unroll
      for (int p = 0; p < kBCols / 64; ++p)
        tma_load_2d_pair(b_dst + p * (Stage::kBBytes / (kBCols / 64)), tmap_b, n0 + 64 * p, k0, leader_full);
    }
  }
};

// The producer's last wait: until the MMAs have released every stage this CTA
// filled, so that no tcgen05.commit arrival for this CTA's ring is still in
// flight when the CTA exits (the arrivals of different commits are not
// ordered with the acc_full one the epilogue waits for).
template <int NUM_STAGES>
__device__ __forceinline__ void wait_ring_released(uint64_t* smem_empty, detail::RingState<NUM_STAGES> ring) {
  for (int i = 0; i < NUM_STAGES; ++i, ring.advance())
    detail::wait_barrier(&smem_empty[ring.index], ring.phase ^ 1, "smem_empty", ring.index, "producer");
}

}  // namespace tcgemm::sm100
