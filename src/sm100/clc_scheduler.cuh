// The sm100 tile scheduler: how the roles of a cluster (a 2-CTA pair, or one
// CTA for the single-CTA tiles) get their tiles.
//
// Tile order: the cluster's tiles come from a GroupedRaster index. With
// SCHEDULE == persistent the grid holds as many clusters as fit at once and
// cluster c takes indices c, c + clusters, ... (PersistentTileWalk,
// common/device/tile_walk.cuh). With cluster_launch_control the grid has one
// cluster per tile; a cluster starts with its own index (blockIdx.x / 2) and
// then takes the index of each cluster it cancels, until a cancel fails:
//
//   scheduler (leader CTA, one thread) -> try_cancel multicast -> clc_full[r]
//     of both CTAs (armed with expect_tx(16) in each first) -> every role
//     reads the response (ClcTileWalk) -> clc_empty[r] of the leader
//     (kClcReaders releases) -> scheduler
//
// Pitfalls handled (docs/DESIGN.md): the 16-byte response is read as one
// 128-bit load; the async proxy is fenced between reading a response and
// issuing the next try_cancel; a slot is refilled only after all its readers
// released it; each CTA's clc_full is armed before the multicast; no
// try_cancel follows a failed one; every role decodes with tile_of() and
// stops at the same response.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/barrier.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "common/device/ring_state.cuh"
#include "common/device/tile_walk.cuh"
#include "sm100/shared_storage.cuh"
#include "sm100/tcgen05.cuh"

namespace tcgemm::sm100 {

using ClcSlot = detail::RingState<kClcSlots>;

// The scheduler warp of the leader CTA, one thread.
struct ClcScheduler {
  uint64_t* clc_full;   // this (the leader) CTA's
  uint64_t* clc_empty;
  uint4* response;

  // One round in `slot`: wait until every reader released what the slot
  // last held, cancel the next cluster not yet started (the response goes to
  // both CTAs), and wait for the response. Whether a cluster was canceled:
  // once none is, the roles stop at this response, and so does the scheduler.
  __device__ __forceinline__ bool cancel_next(ClcSlot slot) const {
    detail::wait_barrier<true>(&clc_empty[slot.index], slot.phase ^ 1, "clc_empty", slot.index, "scheduler");
    // The readers' generic-proxy reads come before the async-proxy write.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    for (uint32_t r = 0; r < kCtaGroup; ++r)
      detail::mbarrier_arrive_expect_tx_remote(detail::map_to_cta(&clc_full[slot.index], r), kClcResponseBytes);
    cuda::ptx::clusterlaunchcontrol_try_cancel_multicast(&response[slot.index], &clc_full[slot.index]);
    detail::wait_barrier<true>(&clc_full[slot.index], slot.phase, "clc_full", slot.index, "scheduler");
    return read_clc_response(&response[slot.index]).canceled;
  }
};

// How a role walks the cluster's tiles under Cluster Launch Control: its own
// tile first, then one per response of the scheduler.
struct ClcTileWalk {
  uint64_t* clc_full;         // this CTA's slots' barriers
  const uint4* response;      // this CTA's response slots
  uint32_t leader_clc_empty;  // shared::cluster address of the leader's clc_empty[0]
  const char* role;           // for the hang report
  bool releases;              // this thread tells the scheduler when its role is done with a slot
  bool whole_warp;            // all 32 lanes walk (the epilogue warps), else one lane does
  ClcSlot slot{};

  // The cluster's own tile: one cluster per tile in launch order.
  __device__ __forceinline__ int first() const { return static_cast<int>(blockIdx.x) / kCtaGroup; }
  // The next response, decoded.
  __device__ __forceinline__ int next() {
    // (Acquire at cluster scope: the PTX ISA tracks a cancel's completion at
    // .cluster scope, 9.7.13.17, and the response comes from the leader's.)
    detail::wait_barrier<true>(&clc_full[slot.index], slot.phase, "clc_full", slot.index, role);
    const int tile = tile_of(read_clc_response(&response[slot.index]));
    // This CTA's generic-proxy read of the slot comes before the next
    // try_cancel's async-proxy write into it (the scheduler fences only its
    // own CTA; the multicast writes this one's slot too).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    // Every lane has read the slot before one lane releases it.
    if (whole_warp) __syncwarp();
    if (releases) detail::mbarrier_arrive_remote_cluster(leader_clc_empty + slot.index * 8);
    slot.advance();
    return tile;
  }
};

// The walk of a role under SCHEDULE: `releases` and `whole_warp` as in
// ClcTileWalk (ignored by the persistent walk).
template <Schedule SCHEDULE, int CTA_GROUP, int BLOCK_N, int NUM_STAGES, int BLOCK_M, bool SWAP_AB>
__device__ __forceinline__ auto make_tile_walk(const SharedStorage<BLOCK_N, NUM_STAGES, CTA_GROUP, BLOCK_M, SWAP_AB>& smem,
                                               int num_tiles, const char* role, bool releases, bool whole_warp) {
  if constexpr (SCHEDULE == Schedule::cluster_launch_control) {
    static_assert(CTA_GROUP == kCtaGroup, "Cluster Launch Control runs the pair tiles");
    return ClcTileWalk{smem.clc_full(), smem.clc_response(), detail::map_to_cta(smem.clc_empty(), 0), role, releases,
                       whole_warp};
  } else {
    static_assert(SCHEDULE == Schedule::persistent, "the launcher resolves Schedule::automatic");
    return detail::PersistentTileWalk{detail::PersistentSchedule{
        static_cast<int>(blockIdx.x) / CTA_GROUP, static_cast<int>(gridDim.x) / CTA_GROUP, num_tiles}};
  }
}

}  // namespace tcgemm::sm100
