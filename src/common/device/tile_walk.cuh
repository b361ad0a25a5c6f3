// How a role walks the output tiles of its CTA (sm90) or 2-CTA cluster
// (sm100). Every walk has the same two calls, so a role's loop reads
//
//   for (int tile = walk.first(); tile >= 0; tile = walk.next()) { ... }
//
// whatever hands out the tiles: first() is the role's first tile index (a
// GroupedRaster index), next() the one after the tile it has just finished,
// -1 when there are no more. Every role of a CTA (and of both CTAs of a
// cluster) walks the same sequence, so the ring positions they compute agree.
//
// The static persistent walk lives here (both families); the sm100 family's
// Cluster Launch Control walk, which learns each next tile from the
// scheduler warp, lives in sm100/clc_scheduler.cuh.
#pragma once

#include "common/tile_order.hpp"

namespace tcgemm::detail {

// The persistent walk: worker `schedule.first` of `schedule.stride` takes the
// tile indices first, first + stride, ... (PersistentSchedule), starting at
// its j-th tile and taking every `step`-th: the sm90 ping-pong consumers take
// alternate tiles of their CTA's sequence (start = consumer, step = 2).
struct PersistentTileWalk {
  PersistentSchedule schedule;
  int j = 0;     // position of the current tile in the worker's sequence
  int step = 1;

  __device__ __forceinline__ int first() const { return schedule.tile(j); }
  __device__ __forceinline__ int next() {
    j += step;
    return schedule.tile(j);
  }
};

}  // namespace tcgemm::detail
