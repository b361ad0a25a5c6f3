// The M-grouped GEMM's slot table, built once per CTA in shared memory
// (common/m_groups.hpp says what the slots are).
#pragma once

#include "common/m_groups.hpp"

namespace tcgemm::detail {

// Writes first_slot[0 .. groups.count] (the first slot of every group, then
// the number of all slots) for tiles of block_m rows; all zero (no slot: the
// call writes nothing) when the clamped ends decrease anywhere. Called by one
// whole warp (lane: the thread's lane), after the grid's dependency on the
// previous kernel is resolved (the ends may be its output); the CTA
// synchronizes before reading the table. Lane l takes groups 8l .. 8l + 7:
// their slots and whether their ends are in order, then one vote and one
// prefix sum across the warp. (detail::slot_table_host is the same table.)
__device__ __forceinline__ void build_slot_table(const MGroups& groups, int* first_slot, int block_m, int lane) {
  constexpr int kPerLane = kMaxGroups / 32;
  static_assert(kPerLane * 32 == kMaxGroups, "whole groups per lane");
  int slots[kPerLane];
  int sum = 0;
  bool ordered = true;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int g = lane * kPerLane + i;
    slots[i] = g < groups.count ? groups.slots(g, block_m) : 0;
    if (g < groups.count) ordered = ordered && groups.end(g) >= groups.start(g);
    sum += slots[i];
  }
  if (!__all_sync(0xffffffffu, ordered)) {
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) slots[i] = 0;
    sum = 0;
  }
  int inclusive = sum;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int v = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= d) inclusive += v;
  }
  int run = inclusive - sum;
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int g = lane * kPerLane + i;
    if (g < groups.count) first_slot[g] = run;
    run += slots[i];
  }
  if (lane == 31) first_slot[groups.count] = inclusive;
}

// The raster an M-grouped call's tiles are walked in: `raster` (N's blocks,
// the raster group) with its block-rows the groups' slots, counted into
// first_slot (build_slot_table, by warp 0; the whole CTA calls this and
// synchronizes on it). A plain call's (GROUPED false): `raster` itself.
template <bool GROUPED>
__device__ __forceinline__ GroupedRaster slot_raster(GroupedRaster raster, const MGroups& groups, int* first_slot,
                                                     int block_m) {
  if constexpr (GROUPED) {
    if (threadIdx.x < 32) build_slot_table(groups, first_slot, block_m, static_cast<int>(threadIdx.x));
    __syncthreads();
    raster.num_m_blocks = first_slot[groups.count];
  }
  return raster;
}

}  // namespace tcgemm::detail
