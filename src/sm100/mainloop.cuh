// The sm100 producer's work on one stage of the operand ring: in each CTA of
// the pair, TMA loads of its 128 rows of A's k-block and its half of B's
// (cta_group::2 loads, sm100/tcgen05.cuh), whose bytes complete the stage's
// full barrier in the leader CTA. The leader's producer arms that barrier
// with the bytes of both CTAs; the MMA issuer waits on it alone. A
// single-CTA tile loads its A rows (128, or 64: BLOCK_M) and all of B into
// its own stage.
//
// Layouts: a K-major operand is one box (K contiguous, 64 wide: one 128-byte
// swizzle line); an MN-major one is loaded in 64-wide panels of M or N, each
// spanning the k-block's 64 lines (common/smem_layout.hpp).
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "common/device/barrier.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "common/device/ring_state.cuh"
#include "sm100/shared_storage.cuh"
#include "sm100/tcgen05.cuh"

namespace tcgemm::sm100 {

// BATCHED: the call is a strided batch, its maps rank 3: every load names
// the operand's batch coordinate (a plain call's loads are built without it).
// HINTED: the call has an operand read once (detail::LoadHints), whose loads
// carry an L2 policy; a call without one is built without the choice (as on
// Hopper: sm90/mainloop.cuh).
template <int BLOCK_N, Major A_MAJOR, Major B_MAJOR, int CTA_GROUP = kCtaGroup, bool BATCHED = false,
          int BLOCK_M = kBlockM, bool HINTED = false>
struct MainloopLoad {
  using Stage = StageLayout<BLOCK_N, CTA_GROUP, BLOCK_M>;
  static constexpr int kBCols = Stage::kBCols;
  static_assert(B_MAJOR == Major::K || kBCols % 64 == 0, "an MN-major B is loaded in whole 64-wide panels");

  const CUtensorMap* tmap_a;
  const CUtensorMap* tmap_b;
  // Single-CTA tiles: the bytes a stage receives, fewer than
  // Stage::kStageBytes where A's box is cut to M rounded up to 8 rows (A
  // K-major, the last block-row's tiles, through a map of their own: the
  // rows past M are never stored, and zero-filling them costs time:
  // sm100_gemm_launch.cuh, a_tail_rows), or for the swapped tiles where
  // B's box is cut to the tokens of the last token tile. The pair arms its
  // leader's barrier with both CTAs' whole stages.
  uint32_t stage_bytes = Stage::kStageBytes;
  // Operands read once (detail::LoadHints; single-CTA tiles): their loads
  // carry `policy`, an L2 evict-first policy.
  bool a_evict_first = false;
  bool b_evict_first = false;
  uint64_t policy = 0;

  // The k-block at k0 of this CTA's rows from m0 and B columns from n0, into
  // the stage at `a_dst`. `full`: this CTA's smem_full of the stage (armed
  // here in the leader), `leader_full`: the leader's, as a shared::cluster
  // address (where both CTAs' bytes land in a pair). BATCHED: a_batch and
  // b_batch are the tile's coordinates in A's and B's rank-3 maps (ignored
  // otherwise).
  __device__ __forceinline__ void operator()(uint8_t* a_dst, uint64_t* full, uint32_t leader_full, bool leader,
                                             int m0, int n0, int k0, int a_batch = 0, int b_batch = 0) const {
    // NOTE: TMA counts whole boxes, zero-filled parts included, so the byte
    // count is the same for edge tiles.
    if (leader)
      cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, full,
                                           CTA_GROUP == 1 ? stage_bytes : kCtaGroup * Stage::kStageBytes);
    uint8_t* b_dst = a_dst + Stage::kABytes;
    if constexpr (A_MAJOR == Major::K) {
      load(a_dst, tmap_a, k0, m0, a_batch, full, leader_full, a_evict_first);
    } else {
#pragma unroll
      for (int p = 0; p < BLOCK_M / 64; ++p)
        load(a_dst + p * (Stage::kABytes / (BLOCK_M / 64)), tmap_a, m0 + 64 * p, k0, a_batch, full, leader_full,
             a_evict_first);
    }
    if constexpr (B_MAJOR == Major::K) {
      load(b_dst, tmap_b, k0, n0, b_batch, full, leader_full, b_evict_first);
    } else {
#pragma unroll
      for (int p = 0; p < kBCols / 64; ++p)
        load(b_dst + p * (Stage::kBBytes / (kBCols / 64)), tmap_b, n0 + 64 * p, k0, b_batch, full, leader_full,
             b_evict_first);
    }
  }

  // One box at (c0, c1) (of matrix `batch`, when BATCHED): in a pair its
  // bytes complete the leader's barrier (the cta_group::2 load), alone this
  // CTA's, with `policy` where `hinted`.
  __device__ __forceinline__ void load(uint8_t* dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t batch,
                                       uint64_t* full, uint32_t leader_full, bool hinted) const {
    const auto alone = [&](const auto& c) {
      if (HINTED && hinted) detail::tma_load_with_policy(dst, map, c, full, policy);
      else cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, map, c, full);
    };
    if constexpr (CTA_GROUP == 2 && BATCHED) {
      tma_load_3d_pair(dst, map, c0, c1, batch, leader_full);
    } else if constexpr (CTA_GROUP == 2) {
      tma_load_2d_pair(dst, map, c0, c1, leader_full);
    } else if constexpr (BATCHED) {
      const int32_t c[3] = {c0, c1, batch};
      alone(c);
    } else {
      const int32_t c[2] = {c0, c1};
      alone(c);
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
