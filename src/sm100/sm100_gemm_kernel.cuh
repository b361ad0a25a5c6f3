// sm100_gemm: C = alpha * op(A) @ op(B) + beta * C on Blackwell (sm_100a).
//
// The design of the GPU MODE matmul_v2 B200 submission (docs/DESIGN.md),
// generalized to any M, N, K, all four layouts, fp16/bf16, alpha/beta and a
// TMA-store epilogue. One tile is one 256 x BLOCK_N MMA
// (tcgen05.mma.cta_group::2) over a 2-CTA cluster; each CTA loads its 128
// rows of A and half of the tile's B columns into its own shared memory, and
// receives its 128 rows of the fp32 accumulator in its own tensor memory.
// Warp roles (7 warps):
//
//   warps 0-3  epilogue    tcgen05.ld (warp w: tensor-memory lanes 32w..+31)
//                          -> alpha/beta in fp32 -> round once -> 32x64
//                          swizzled panel -> TMA store (sm100/epilogue.cuh)
//   warp 4     scheduler   Cluster Launch Control, leader CTA only
//                          (sm100/clc_scheduler.cuh)
//   warp 5     producer    TMA loads of this CTA's A rows and B half
//                          (sm100/mainloop.cuh)
//   warp 6     MMA         allocates tensor memory (both CTAs, once both
//                          have passed the first cluster barrier:
//                          sm100/tmem_allocator.cuh); in the leader CTA one
//                          lane issues every tcgen05.mma of the pair
//                          (sm100/mma.cuh)
//
// Barrier flow (s = ring stage, b = accumulator buffer, r = CLC slot):
//
//   TMA (both CTAs) -> smem_full[s] of the leader (count 1: the leader's
//     expect_tx of both CTAs' bytes) -> MMA -> tcgen05.commit multicast ->
//     smem_empty[s] of both CTAs -> TMA
//   MMA (last k-block of a tile) -> commit multicast -> acc_full[b] of both
//     CTAs -> epilogue -> acc_empty[b] of the leader (4 warps x 2 CTAs) -> MMA
//   scheduler -> try_cancel multicast -> clc_full[r] of both CTAs -> every
//     role reads the response -> clc_empty[r] of the leader -> scheduler
//
// Single-CTA tiles (CTA_GROUP = 1, the small-M configurations): one
// BLOCK_M x BLOCK_N MMA (cta_group::1; BLOCK_M 128, or 64 for M <= 64) in one
// CTA, which loads all of B; the same roles and barriers within the CTA,
// commits without multicast, the persistent schedule only. A's box is cut to
// M rounded up to 8 rows when A is K-major (sm100/mainloop.cuh). A 64-row
// accumulator fills the first 16 lanes of each warp's quarter of tensor
// memory, so each epilogue warp stores 16 rows (tmem_lane, epilogue_rows).
//
// A strided batch (GemmArgs::batch > 1): the raster's tile indices run over
// batch x tiles (common/tile_order.hpp), so the persistent grid, or Cluster
// Launch Control's one cluster per tile, covers every problem in one launch;
// the maps are rank 3 and every TMA copy names the tile's batch (0 for an
// operand repeated for every batch: batch_steps), and the stores that write
// C by address start at batch * stride_c.
//
// The two accumulator buffers (double-buffered tensor memory) let the MMAs of
// tile i+1 run while the epilogue drains tile i. Tensor memory is allocated
// only after a cluster barrier (the peer CTA must have launched: PTX ISA) and
// freed only after another, once no MMA or tcgen05.ld of either CTA can
// still touch it.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/arch_guard.cuh"
#include "common/device/barrier.cuh"
#include "common/device/epilogue.cuh"
#include "common/device/m_groups.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "common/device/ring_state.cuh"
#include "sm100/clc_scheduler.cuh"
#include "sm100/epilogue.cuh"
#include "sm100/mainloop.cuh"
#include "sm100/mma.cuh"
#include "sm100/shared_storage.cuh"
#include "sm100/sm100_config.hpp"
#include "sm100/tmem_allocator.cuh"
#include "sm100/umma_desc.hpp"

namespace tcgemm::sm100 {

using detail::EpilogueParams;

// SWAP_AB: the swapped tiles (Sm100TileConfig::swap_ab). The launcher hands
// the kernel the call's B as its A and the call's A (the tokens, K-major) as
// its B (detail::swapped_operands), so its tiles, maps and k-loop are the
// single-CTA 128-row tile's over C^T; only the epilogue differs
// (SwapEpilogue: each thread stores one of C's columns down the tile's rows),
// and `epi` is the call's own (C's M, N and leading dimension).
template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, Schedule SCHEDULE,
          int CTA_GROUP = kCtaGroup, bool FUSED = false, bool GROUPED = false, int BLOCK_M = kBlockM,
          bool SWAP_AB = false>
__global__ void __launch_bounds__(kThreads, 1)
    sm100_gemm(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
               const __grid_constant__ CUtensorMap tmap_c, const __grid_constant__ CUtensorMap tmap_tail,
               const GroupedRaster raster, const int num_k_blocks, const EpilogueParams epi,
               const uint32_t tail_bytes, const detail::BatchSteps batch_steps, const detail::MGroups groups,
               const detail::LoadHints hints) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 1000) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  static_assert(CTA_GROUP == kCtaGroup || (CTA_GROUP == 1 && SCHEDULE == Schedule::persistent),
                "single-CTA tiles are built with the persistent schedule");
  static_assert(!GROUPED || (CTA_GROUP == 1 && A_MAJOR == Major::K && !FUSED && BLOCK_N >= kEpiPanelCols),
                "an M-grouped call: single-CTA tiles of whole panels, A K-major, the plain epilogue");
  static_assert(BLOCK_M == kBlockM || (BLOCK_M == 64 && CTA_GROUP == 1 && !GROUPED),
                "64-row tiles are single-CTA (a tcgen05 MMA of M = 64), not M-grouped");
  static_assert(!SWAP_AB || (CTA_GROUP == 1 && BLOCK_M == kBlockM && B_MAJOR == Major::K && !GROUPED &&
                             SCHEDULE == Schedule::persistent),
                "the swapped tiles: single-CTA, 128 rows, persistent, the tokens (the kernel's B) K-major");
  constexpr bool kPair = CTA_GROUP == 2;
  using Ring = detail::RingState<NUM_STAGES>;
  using AccRing = detail::RingState<kAccBuffers>;
  using Mma = MainloopMma<Element, BLOCK_N, A_MAJOR, B_MAJOR, CTA_GROUP, BLOCK_M>;
  extern __shared__ uint8_t smem_raw[];
  const auto smem = SharedStorage<BLOCK_N, NUM_STAGES, CTA_GROUP, BLOCK_M, SWAP_AB>::at(smem_raw);
  const TmemAllocator<tmem_columns(BLOCK_N), CTA_GROUP> tmem{smem.tmem_base_slot()};
  const int warp = detail::warp_uniform(static_cast<int>(threadIdx.x) / 32);  // (keeps roles' loops uniform)
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int rank = kPair ? static_cast<int>(cuda::ptx::get_sreg_cluster_ctarank()) : 0;
  const bool leader = rank == 0;
  int num_tiles = raster.num_tiles();  // (an M-grouped call's: once its groups are read, below)
  // Where a CTA's barriers are reached from the group: the leader's, as
  // shared::cluster addresses (a CTA's own shared::cta address is one too).
  auto leader_addr = [](const void* p) {
    return kPair ? detail::map_to_cta(p, 0) : static_cast<uint32_t>(__cvta_generic_to_shared(p));
  };
  if (threadIdx.x == 0) {
    if constexpr (SWAP_AB) detail::prefetch_tensormaps(&tmap_a, &tmap_b, &tmap_tail);  // (C: stored from registers)
    else detail::prefetch_tensormaps(&tmap_a, &tmap_b, &tmap_c, &tmap_tail);
    smem.init_barriers(detail::ring_full_arrivals(epi));
  }
  // Every CTA of the group has launched and initialized its barriers.
  if constexpr (kPair) detail::cluster_sync_after_init(); else __syncthreads();
  // A programmatic dependent launch (Options::pdl) gets here while the
  // stream's previous kernel may still run: nothing above touched global
  // memory; from here on A, B and C may be its output.
  cudaGridDependencySynchronize();
  // An M-grouped call (GROUPED): its tiles are the groups' slots
  // (common/m_groups.hpp) by N's blocks, counted from the ends on the device
  // into a table of every group's first slot; a tile's group is found in it
  // (the sm90 kernel's scheme: sm90/sm90_gemm_kernel.cuh).
  __shared__ int first_slot[GROUPED ? kMaxGroups + 1 : 1];
  const GroupedRaster walk_raster = detail::slot_raster<GROUPED>(raster, groups, first_slot, kBlockM);
  if constexpr (GROUPED) num_tiles = walk_raster.num_tiles();
  const auto group_rows = [&](const TileCoord& t) { return detail::locate(groups, first_slot, t.m_block, kBlockM); };
  // Tensor memory: allocated by the MMA warps of both CTAs together, its
  // address published to the warps that use it (sm100/tmem_allocator.cuh).
  uint32_t tmem_base = 0;
  if (warp == kMmaWarp) tmem.allocate();
  if (warp == kMmaWarp || warp < kEpilogueWarps) tmem_base = tmem.publish(kTmemBarrierId, kTmemUsers);

  // The roles, by warp (sm100_config.hpp numbers them).
  if (warp == kSchedulerWarp) {
    // ======================= scheduler (leader CTA): cancels clusters until a cancel fails =======================
    if constexpr (SCHEDULE == Schedule::cluster_launch_control) {
      if (leader && detail::elect_one()) {
        const ClcScheduler scheduler{smem.clc_full(), smem.clc_empty(), smem.clc_response()};
        for (ClcSlot slot; scheduler.cancel_next(slot);) slot.advance();
      }
    }
  } else if (warp == kProducerWarp) {
    // ======================= producer (both CTAs): fills the ring =======================
    if (detail::elect_one()) {
      const uint32_t leader_smem_full = leader_addr(smem.smem_full());  // where the group's bytes land
      // The loop for a plain call (rank-2 maps, tiles decoded without a
      // batch) or a batched one (rank-3 maps, every load names its batch),
      // with or without operands read once (hinted: MainloopLoad's HINTED):
      // built once each, chosen once. Returns where the ring stopped.
      const auto produce = [&](auto batched, auto hinted) {
        constexpr bool kBatched = decltype(batched)::value;
        using Load = MainloopLoad<BLOCK_N, A_MAJOR, B_MAJOR, CTA_GROUP, kBatched, BLOCK_M, decltype(hinted)::value>;
        // A single-CTA tile of the last block-row, whose rows run past M,
        // loads A through tmap_tail, its box cut to the rows there are
        // (tail_bytes of a stage; the launcher's a_tail_rows): the rows
        // past M, left as the stage last held them, reach only accumulator
        // rows that are never stored. (Not for pairs or groups: there
        // tmap_tail is tmap_a.) The swapped tiles cut B's box instead, for
        // the tiles of the last token tile (the kernel's N is C's M,
        // epi.m): the tokens past M reach only accumulator columns that are
        // never stored. Map and byte count picked once a tile, as scalars,
        // as on Hopper.
        constexpr bool kTailMap = !kPair && !GROUPED;
        auto walk = make_tile_walk<SCHEDULE, CTA_GROUP>(smem, num_tiles, "producer", true, false);
        // Operands read once (detail::LoadHints) are loaded evict-first (single-CTA tiles: a pair's
        // loop is built without hints, below).
        const bool a_once = hints.a_evict_first != 0, b_once = hints.b_evict_first != 0;
        const uint64_t policy = decltype(hinted)::value ? detail::l2_evict_first_policy() : 0;
        Ring ring;
        for (int tile = walk.first(); tile >= 0; tile = walk.next()) {
          const TileCoord t = GROUPED ? walk_raster.in_batch(tile) : kBatched ? raster.tile(tile) : raster.in_batch(tile);
          // (An M-grouped tile: its group's rows of A, its group's matrix of B.)
          const detail::GroupRows rows = GROUPED ? group_rows(t) : detail::GroupRows{};
          const int m0 = GROUPED ? rows.row0 : cta_row0(t, rank, CTA_GROUP, BLOCK_M);
          const int n0 = cta_b_col0(t, rank, BLOCK_N, CTA_GROUP);
          // (Compared as x0 > size - BLOCK: x0 + BLOCK overflows int at sizes near 2^31.)
          const bool tail = kTailMap && (SWAP_AB ? n0 > epi.m - BLOCK_N : m0 > epi.m - BLOCK_M);
          const Load load{tail && !SWAP_AB ? &tmap_tail : &tmap_a, tail && SWAP_AB ? &tmap_tail : &tmap_b,
                          !tail     ? Load::Stage::kStageBytes
                          : SWAP_AB ? Load::Stage::kABytes + tail_bytes
                                    : tail_bytes + Load::Stage::kBBytes,
                          a_once, b_once, policy};
          for (int kb = 0; kb < num_k_blocks; ++kb) {
            detail::wait_barrier(&smem.smem_empty()[ring.index], ring.phase ^ 1, "smem_empty", ring.index,
                                 "producer");
            load(smem.stage(ring.index), &smem.smem_full()[ring.index], leader_smem_full + ring.index * 8, leader, m0, n0,
                 kb * kBlockK, GROUPED ? 0 : t.batch * batch_steps.a,
                 (GROUPED ? rows.group : t.batch) * batch_steps.b);
            ring.advance();
          }
        }
        return ring;
      };
      // (An M-grouped call's maps are rank 3: B holds a matrix per group. It
      // has no hints, nor has a pair.)
      const bool hinted = hints.a_evict_first != 0 || hints.b_evict_first != 0;
      const auto produce_batched = [&](auto batched) {
        if constexpr (GROUPED || kPair) return produce(batched, std::false_type{});
        else return hinted ? produce(batched, std::true_type{}) : produce(batched, std::false_type{});
      };
      const Ring ring =
          GROUPED || raster.batch > 1 ? produce_batched(std::true_type{}) : produce_batched(std::false_type{});
      // The CTA's last loads are issued: a programmatic dependent next
      // kernel may start its launch (it waits for this grid to complete).
      cudaTriggerProgrammaticLaunchCompletion();
      wait_ring_released(smem.smem_empty(), ring);  // no commit for this CTA's ring still in flight
    }
  } else if (warp == kMmaWarp) {
    // ======================= MMA issuer (leader CTA): one lane for the pair =======================
    if (leader && detail::elect_one()) {
      const Mma mma(static_cast<uint32_t>(__cvta_generic_to_shared(smem.ring)));
      auto walk = make_tile_walk<SCHEDULE, CTA_GROUP>(smem, num_tiles, "MMA", true, false);
      Ring ring;
      AccRing acc;
      for (int tile = walk.first(); tile >= 0; tile = walk.next()) {
        // The epilogues of both CTAs have drained this accumulator buffer.
        detail::wait_barrier<true>(&smem.acc_empty()[acc.index], acc.phase ^ 1, "acc_empty", acc.index, "MMA");
        cuda::ptx::tcgen05_fence_after_thread_sync();
        for (int kb = 0; kb < num_k_blocks; ++kb) {
          detail::wait_barrier(&smem.smem_full()[ring.index], ring.phase, "smem_full", ring.index, "MMA");
          cuda::ptx::tcgen05_fence_after_thread_sync();
          mma.issue(ring.index, tmem_addr(tmem_base, 0, acc.index * acc_columns(BLOCK_N)), kb);
          Mma::commit_to_group(&smem.smem_empty()[ring.index]);  // once read, the CTAs may refill the stage
          ring.advance();
        }
        Mma::commit_to_group(&smem.acc_full()[acc.index]);  // once complete, the CTAs' epilogues may read it
        acc.advance();
      }
    }
  } else {
    // ======================= epilogue (warps 0-3, both CTAs): drains the accumulators =======================
    // Tiles narrower than one 64-column panel (8 to 48) store straight
    // from registers; the others through 64-column panels (96: and a last
    // one of 32 columns, stored by the warp's threads). Each warp stores
    // its epilogue_rows(BLOCK_M) rows of the tile (the swapped tiles: its 32
    // of C's columns, down the tile's rows of C).
    constexpr int kWarpRows = epilogue_rows(BLOCK_M);
    // (stores_from_registers says which: the shared memory holds panels for the others only.)
    using TileEpilogue = std::conditional_t<
        SWAP_AB, SwapEpilogue<Element, BLOCK_N>,
        std::conditional_t<stores_from_registers(BLOCK_N), RegisterEpilogue<Element, BLOCK_N, kWarpRows>,
                           Epilogue<Element, BLOCK_N, GROUPED, kWarpRows>>>;
    static_assert(stores_from_registers(BLOCK_N, SWAP_AB) == (std::remove_cv_t<decltype(smem)>::kPanelAreaBytes == 0),
                  "panels in shared memory exactly for the panel epilogue");
    TileEpilogue epilogue{&tmap_c, smem.panels(), smem.c_loaded(), tmem_base, leader_addr(smem.acc_empty()), warp,
                          lane};
    // The tile loop, with the epilogue kind as a compile-time constant: a
    // kernel built with the fused epilogue picks its activation here, once.
    auto tiles = [&](auto epilogue_kind) {
      constexpr int kAct = decltype(epilogue_kind)::value;
      auto walk = make_tile_walk<SCHEDULE, CTA_GROUP>(smem, num_tiles, "epilogue", lane == 0, true);
      AccRing acc;
      for (int tile = walk.first(); tile >= 0; tile = walk.next()) {
        const TileCoord t = GROUPED ? walk_raster.in_batch(tile) : raster.tile(tile);
        // The tile's coordinates are computed while the MMAs run, not after
        // the wait where the compiler would otherwise sink them. An M-grouped
        // tile stores rows up to its group's end only (tile_epi.m).
        int m0 = cta_row0(t, rank, CTA_GROUP, BLOCK_M) + warp * kWarpRows;
        int n0 = t.n_block * BLOCK_N;
        int batch = t.batch;
        EpilogueParams tile_epi = epi;
        if constexpr (GROUPED) {
          const detail::GroupRows rows = group_rows(t);
          m0 = rows.row0 + warp * kWarpRows;
          batch = 0;
          tile_epi.m = rows.row_end;
        }
        detail::compute_here(m0);
        detail::compute_here(n0);
        detail::compute_here(batch);
        detail::wait_barrier(&smem.acc_full()[acc.index], acc.phase, "acc_full", acc.index, "epilogue");
        cuda::ptx::tcgen05_fence_after_thread_sync();
        epilogue.template store_tile<kAct>(acc.index, GROUPED ? tile_epi : epi, m0, n0, batch);
        epilogue.release(acc.index);  // on the leader's acc_empty: the MMAs may overwrite it
        acc.advance();
      }
    };
    if constexpr (FUSED) detail::with_activation(epi.activation, tiles);
    else tiles(std::integral_constant<int, detail::kPlainEpilogue>{});
    epilogue.finish();
  }

  // ---- teardown: no CTA exits, and no tensor memory is freed, while the
  // peer can still write into it (MMAs, multicasts, arrivals).
  __syncwarp();
  cuda::ptx::tcgen05_fence_before_thread_sync();
  if constexpr (kPair) detail::cluster_sync(); else __syncthreads();
  if (warp == kMmaWarp) tmem.deallocate(tmem_base);
#elif defined(__CUDA_ARCH__)
  static_assert(detail::kDependentFalse<Element>,
                "sm100_gemm is sm_100a code: build its translation units for compute_100a/sm_100a only");
#endif
}

}  // namespace tcgemm::sm100
