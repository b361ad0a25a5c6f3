// Counted tiles (Schedule::counted): the sm90 kernel's tiles handed out in
// index order by a counter in global memory, the Hopper analog of the sm100
// family's Cluster Launch Control (sm100/clc_scheduler.cuh).
//
// Why: under the static persistent schedule CTA c takes tiles c, c + grid,
// ... whatever the others do, so over a long walk the CTAs drift apart, and
// the operands of a tile a lagging CTA takes may have left L2 long before.
// Taken from a counter, the tiles in flight stay a contiguous run of the
// raster, as a grid of one CTA per tile would keep them (docs/DESIGN.md,
// "Counted tiles").
//
//   producer (one thread): t = atomicAdd(&counter[0], 1) -> writes t beside
//     the first stage of the tile (SharedStorage::stage_tile) -> the stage's
//     smem_full completes with the TMA bytes -> consumers read t there
//   end: the producer fills the next tile's first stage with -1 and no
//     bytes (a plain arrive); a consumer that reads -1 stops, and with
//     ping-pong tells the other consumer through the done flag and its turn
//   reset: every CTA's producer counts itself out in counter[1] after its
//     last take; the last CTA to do so zeroes both words, so the next kernel
//     on the stream (which waits for this grid: stream order, or
//     cudaGridDependencySynchronize under PDL) finds them zero.
//
// The counter is the launcher's (sm90/tile_counters.cu): one per stream, or
// one per captured launch, never shared by two grids that may run at once.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/barrier.cuh"
#include "common/device/ring_state.cuh"
#include "common/tile_order.hpp"

namespace tcgemm::sm90 {

// The next tile index of a counted walk, or -1 past the last of num_tiles.
__device__ __forceinline__ int take_counted_tile(uint32_t* counter, int num_tiles) {
  const int t = static_cast<int>(atomicAdd(counter, 1u));
  return t < num_tiles ? t : -1;
}

// After a CTA's last take: counts the CTA out, and the last of `ctas` to
// count out zeroes the counter for the stream's next kernel.
__device__ __forceinline__ void count_out(uint32_t* counter, uint32_t ctas) {
  if (atomicAdd(&counter[1], 1u) == ctas - 1) {
    atomicExch(&counter[0], 0u);
    atomicExch(&counter[1], 0u);
  }
}

// A consumer's walk over its CTA's tiles, static or counted (`counted`,
// uniform over the grid). Static: the persistent schedule's j-th tile
// (detail::PersistentTileWalk's arithmetic). Counted: the j-th tile's index
// rides in the stage_tile slot of that tile's first ring stage (ring
// position j * num_k_stages). Cooperative consumers take every j, ping-pong
// ones every other (j from the consumer's index, step 2). PINGPONG and
// counted: before the slot is read, the consumer waits for its turn
// (math_turn), which the static walk waits for in the kernel, before its
// mainloop (kernel_waits_turn), so that it never waits on a stage more than
// one ring fill ahead; the other consumer's end is then in the done flag.
// The walk holds only its position: what it reads it is given at each take
// (values the kernel holds anyway), so that the consumers, at the edge of
// their registers, keep no copies.
template <int NUM_STAGES, bool PINGPONG>
struct ConsumerTileWalk {
  static constexpr int kStep = PINGPONG ? 2 : 1;
  detail::PersistentSchedule schedule;
  int j;  // position of the current tile in the CTA's sequence

  // The parity of the ping-pong turn a consumer waits for at position j > 0:
  // it has waited at each of its earlier positions but the first (j is
  // consumer, consumer + 2, ...), (j - 1) / 2 times.
  __device__ __forceinline__ uint32_t turn_parity() const { return static_cast<uint32_t>((j - 1) / 2) & 1; }

  // Whether the kernel waits for the ping-pong turn itself (the static walk).
  __device__ __forceinline__ static bool kernel_waits_turn(bool counted) { return PINGPONG && !counted; }

  // The tile at position j: `stage_tile` SharedStorage::stage_tile(),
  // `full_bars` smem_full[0]'s shared address, `turn` math_turn[0],
  // `consumer` this consumer's index, `leader` whether this thread is its
  // thread 0 (it hands the turn over at the end).
  __device__ __forceinline__ int take(bool counted, volatile int* stage_tile, uint32_t full_bars, uint64_t* turn,
                                      int num_k_stages, int consumer, bool leader) {
    if (!counted) return schedule.tile(j);
    if (PINGPONG && j > 0) {
      detail::wait_barrier(&turn[consumer], turn_parity(), "math_turn", consumer, "consumer (counted)");
      if (stage_tile[NUM_STAGES] != 0) return -1;
    }
    const auto first = detail::RingState<NUM_STAGES>::at(static_cast<int64_t>(j) * num_k_stages);
    detail::wait_barrier(full_bars + first.index * static_cast<uint32_t>(sizeof(uint64_t)), first.phase,
                         "smem_full", first.index, "consumer (counted tile)");
    const int tile = stage_tile[first.index];
    if (PINGPONG && tile < 0 && leader) {
      stage_tile[NUM_STAGES] = 1;
      cuda::ptx::mbarrier_arrive(&turn[consumer ^ 1]);
    }
    return tile;
  }
};

}  // namespace tcgemm::sm90
