// sm90_gemm_persistent: C = alpha * op(A) @ op(B) + beta * C on Hopper.
//
// One CTA per SM, 1 producer warpgroup and 2 consumers (one for 64- and
// 8-row tiles), looping over output tiles in grouped raster
// order (common/tile_order.hpp, common/device/tile_walk.cuh). Roles:
//
//   producer  (warpgroup 0, one thread)  TMA loads of A and B k-blocks into a
//                                        NUM_STAGES-deep shared-memory ring
//                                        (sm90/mainloop.cuh)
//   consumers (warpgroups 1, 2)          wgmma m64nNk16, 64 rows of the
//                                        128-row tile each; fp32 accumulators
//                                        in registers (sm90/mma.cuh); then the
//                                        epilogue: registers -> stmatrix ->
//                                        64x64 panel -> TMA store, clipped at
//                                        the edges (sm90/epilogue.cuh)
//
// Barrier flow (s = ring stage, b = epilogue panel buffer, c = consumer):
//
//   TMA -> smem_full[s] -> wgmma -> smem_empty[s] -> TMA
//   acc -> stmatrix -> panel[b] -> TMA store -> (bulk read done) -> panel[b]
//   (beta != 0)  TMA load of C -> c_loaded[b] -> ldmatrix -> panel[b]
//   (ping-pong)  consumer c has waited for all its tile's stages ->
//                math_turn[c ^ 1] -> the other consumer's next tile
//
// The producer runs ahead across tile boundaries, so the next tile's first
// k-blocks load while the consumers run the epilogue of the current one, and
// TMA stores drain while the next tile's wgmmas run.
//
// CLUSTER_M = 2: two CTAs of a cluster take vertically adjacent tiles and
// share B by multicast (sm90/mainloop.cuh). CLUSTER_N = 2: they take
// horizontally adjacent tiles and share A the same way. A stage may then be
// refilled only when the consumers of both CTAs released it, so every
// consumer warp arrives on smem_empty[s] of both CTAs. The raster walks
// clusters: its (m_block, n_block) is the cluster's, and rank r of the
// cluster takes the r-th tile of it along M or N.
//
// SWAP_AB (the swapped kernel, 128- or 256-row tiles, its B K-major: the call's A,
// the tokens, stored K-major; its A, the call's B, either way): the launcher
// gives it the call's B as A and A as B (detail::swapped_operands), so it
// computes C^T tile by tile: its rows are C's columns, its columns C's rows.
// Only the epilogue knows: it stores each panel transposed (stmatrix.trans)
// into a panel of C's orientation, with C's own M, N and map; and the
// producer, which loads the last token tile's B (the tokens past M cut off)
// through the tail map where the other kernels load A's last block-row.
//
// A strided batch (GemmArgs::batch > 1): the raster's tile indices run over
// batch x tiles (common/tile_order.hpp), so one persistent grid walks every
// problem; the maps are rank 3 and every TMA copy names the tile's batch
// (0 for an operand repeated for every batch: batch_steps), and the stores
// that write C by address start at batch * stride_c.
//
// An M-grouped call (GROUPED; GemmArgs::groups): each CTA first builds a
// table of the groups' first slots (block_m-row tiles that never cross a
// group's end) from the ends on the device (common/device/m_groups.cuh);
// the raster walks slots x N's blocks, every role finds a tile's group by
// binary search in it, A's box starts at the slot's first row, B's names
// the group's matrix, and the epilogue stores rows up to the group's end
// only (docs/DESIGN.md, "M-grouped GEMM").
//
// BLOCK_M = 64 (the small-M tiles, chosen for M <= 64): one consumer
// warpgroup (256 threads), 8 to 256 columns, a ring as deep as shared memory
// allows (5-25 stages), and an epilogue straight from the accumulator
// registers to C (sm90/epilogue.cuh, RegisterEpilogue): decoding multiplies
// a few rows of A against all of B, so every SM must stream its share of B
// and nothing else may hold it up. A's box is cut to M rounded up to 8 rows
// when A is K-major (sm90/mainloop.cuh); the rows past it are never stored.
//
// BLOCK_M = 8 (the decode tile, chosen for M <= 8 with A and B K-major):
// the 64-row tile's kernel with A's slot cut to the 8 rows A's box holds
// anyway (1 KiB a k-block), read by each m64 wgmma as all eight of its 8-row
// groups (sm90/mma.cuh), and stages of kDecodeStageKBlocks k-blocks: one
// full barrier, one empty barrier and one wgmma group per 4 k-blocks, and a
// ring still 6-28 stages deep. Only the accumulator's rows 0-7 are stored.
// Position of a tile's stage s in the ring: j * num_k_stages + s; the last
// stage holds the k-blocks left (a k-block wholly past K is neither loaded
// nor multiplied, so every row gets the other tiles' k16 steps).
//
// BLOCK_M = 256 (the tall tile, 64 to 128 wide, chosen for a few hundred
// rows of C against a wide B): the 128-row tile's kernel with each consumer
// holding 128 rows in two m64 accumulators, A's box 256 rows (cut at M like
// the others'), so that B's columns are read once per block-row of 256 rows
// instead of once per block-row of 128. Swapped (SWAP_AB), 136 to 160 wide:
// 256 rows of W by the tokens, where they halve the 128-row tiles' waves.
//
// Counted tiles (Schedule::counted; the 128-row tiles of one CTA, when the
// launcher passes `tile_counter`): the producer takes each next tile index
// from a counter in global memory instead of the static schedule, and hands
// it to the consumers in the tile's first ring stage (sm90/tile_counter.cuh),
// so that the tiles in flight stay a contiguous run of the raster.
//
// Operands read once (detail::LoadHints: B where the grid has one block-row,
// A where it has one block-column): their TMA loads carry an L2 evict-first
// policy (sm90/mainloop.cuh), so that a decoding call's stream of weights
// does not push out of L2 what other kernels left there (docs/DESIGN.md,
// "Operands read once").
//
// PINGPONG: instead of splitting each tile's rows, the two consumers take
// alternate tiles of the CTA's sequence, each computing all 128 rows (two
// m64 accumulators). The producer still fills the ring tile after tile, so
// consumer 1's k-blocks arrive just as consumer 0's run out: the mainloops
// take turns on the tensor cores and each epilogue overlaps the other
// consumer's mainloop (the Hopper analog of double-buffered accumulators in
// tensor memory on Blackwell; docs/DESIGN.md). Ring position of k-block kb of
// the CTA's j-th tile: j * num_k_blocks + kb, whichever consumer takes it. A
// consumer starts a tile's mainloop only when the other has issued all of its
// previous tile (math_turn[c]): mbarrier waits are by phase parity, so a
// consumer must never wait on a stage more than one fill ahead of where the
// ring is.
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
#include "common/device/tile_walk.cuh"
#include "sm90/epilogue.cuh"
#include "sm90/mainloop.cuh"
#include "sm90/mma.cuh"
#include "sm90/shared_storage.cuh"
#include "sm90/sm90_config.hpp"
#include "sm90/tile_counter.cuh"
#include "sm90/wgmma.cuh"

namespace tcgemm::sm90 {

using detail::EpilogueParams;

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, int CLUSTER_N,
          bool PINGPONG, int BLOCK_M = kBlockM, bool FUSED = false, bool GROUPED = false, bool SWAP_AB = false>
__global__ void __launch_bounds__(threads_for(BLOCK_M), 1)
    sm90_gemm_persistent(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                         const __grid_constant__ CUtensorMap tmap_c, const __grid_constant__ CUtensorMap tmap_tail,
                         const GroupedRaster raster, const int num_k_blocks, const EpilogueParams epi,
                         const uint32_t tail_bytes,
                         const detail::BatchSteps batch_steps, const detail::MGroups groups,
                         uint32_t* const tile_counter, const detail::LoadHints hints) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // CTAs per cluster: 2 along M or along N, or 1.
  constexpr int kClusterCtas = CLUSTER_M * CLUSTER_N;
  static_assert(CLUSTER_M == 1 || CLUSTER_N == 1, "a cluster of 2 CTAs along M or along N, not both");
  static_assert(!PINGPONG || kClusterCtas == 1, "ping-pong consumers take alternate tiles of one CTA: no cluster");
  static_assert(BLOCK_M == kBlockM ||
                    ((BLOCK_M == kSmallBlockM || BLOCK_M == kDecodeBlockM || BLOCK_M == kTallBlockM) &&
                     kClusterCtas == 1 && !PINGPONG),
                "64-, 8- and 256-row tiles: no cluster, no ping-pong");
  static_assert(BLOCK_M != kTallBlockM || !GROUPED, "the tall tile: not for M-grouped calls");
  static_assert(BLOCK_M != kDecodeBlockM || (A_MAJOR == Major::K && B_MAJOR == Major::K),
                "the decode tile: A and B K-major");
  static_assert(!SWAP_AB || ((BLOCK_M == kBlockM || BLOCK_M == kTallBlockM) && kClusterCtas == 1 && !PINGPONG && !GROUPED &&
                             B_MAJOR == Major::K),
                "the swapped kernel: 128- or 256-row tiles, no cluster, no ping-pong, its B (the call's A) K-major");
  static_assert(!GROUPED || (kClusterCtas == 1 && A_MAJOR == Major::K && BLOCK_M != kDecodeBlockM && !FUSED),
                "an M-grouped call: A K-major (a group's rows start anywhere), no cluster, the plain epilogue");
  // A 64- or 8-row tile has one consumer, which stores straight from its registers.
  constexpr bool kSmallM = stores_from_registers(BLOCK_M);
  // Counted tiles (sm90/tile_counter.cuh): for the 128-row tiles of one CTA,
  // unswapped, not M-grouped (counts_tiles), when the launcher passes a counter.
  const bool counted = counts_tiles(BLOCK_M, kClusterCtas, SWAP_AB, GROUPED) && tile_counter != nullptr;
  // K-blocks per ring stage (kDecodeStageKBlocks for the decode tile, else 1).
  constexpr int kKBlocks = stage_k_blocks(BLOCK_M);
  using Mma = MainloopMma<Element, BLOCK_N, A_MAJOR, B_MAJOR, PINGPONG, BLOCK_M>;
  using Release = StageRelease<kClusterCtas, PINGPONG ? 1 : consumers_for(BLOCK_M)>;
  using Ring = detail::RingState<NUM_STAGES>;
  using TileEpilogue = std::conditional_t<kSmallM, RegisterEpilogue<Element, BLOCK_N, (kSmallM ? BLOCK_M : kSmallBlockM)>,
                                          Epilogue<Element, BLOCK_N, Mma::kMmaRows, GROUPED, SWAP_AB,
                                                   epi_buffers(BLOCK_M, BLOCK_N)>>;
  // (The host encodes C's pair map where stores_panel_pairs says this kernel stores pairs.)
  static_assert(TileEpilogue::kPairs == stores_panel_pairs(BLOCK_M, BLOCK_N, SWAP_AB, GROUPED),
                "the epilogue's paired stores and the host's pair map agree");
  // The kernel's M and N: the rows of its A and B (C's columns and rows for the swapped kernel).
  const int kernel_m = SWAP_AB ? epi.n : epi.m;
  const int kernel_n = SWAP_AB ? epi.m : epi.n;
  // Ring stages per tile, and the k-blocks of a tile's stage ks (all but the last: kKBlocks).
  const int num_k_stages = kKBlocks == 1 ? num_k_blocks : (num_k_blocks + kKBlocks - 1) / kKBlocks;
  const auto stage_count = [num_k_blocks](int ks) {
    return kKBlocks == 1 ? 1 : min(kKBlocks, num_k_blocks - ks * kKBlocks);
  };
  extern __shared__ uint8_t smem_raw[];
  constexpr int kBCols = b_slot_cols(BLOCK_N, BLOCK_M, B_MAJOR == Major::MN);  // B's k-block in a stage
  const auto smem = SharedStorage<BLOCK_N, NUM_STAGES, BLOCK_M, kBCols>::at(smem_raw);
  const int warpgroup = detail::warp_uniform(static_cast<int>(threadIdx.x) / 128);  // (keeps roles' loops uniform)
  const int wg_thread = threadIdx.x % 128;
  // This CTA takes tile `cta_rank` of its cluster's CLUSTER_M x CLUSTER_N;
  // the cluster's tiles come in the same order in both CTAs.
  const uint32_t cta_rank = kClusterCtas > 1 ? cuda::ptx::get_sreg_cluster_ctarank() : 0;
  // The first row and column of this CTA's tile of the cluster tile t.
  const auto tile_m0 = [cta_rank](const TileCoord& t) {
    return (t.m_block * CLUSTER_M + (CLUSTER_M > 1 ? static_cast<int>(cta_rank) : 0)) * BLOCK_M;
  };
  const auto tile_n0 = [cta_rank](const TileCoord& t) {
    return (t.n_block * CLUSTER_N + (CLUSTER_N > 1 ? static_cast<int>(cta_rank) : 0)) * BLOCK_N;
  };
  // (An M-grouped call's tile count is known once its groups are read, below.)
  detail::PersistentSchedule schedule{static_cast<int>(blockIdx.x) / kClusterCtas,
                                      static_cast<int>(gridDim.x) / kClusterCtas, raster.num_tiles()};
  if (threadIdx.x == 0) {
    if constexpr (kSmallM) detail::prefetch_tensormaps(&tmap_a, &tmap_b, &tmap_tail);  // (C: stored from registers)
    else detail::prefetch_tensormaps(&tmap_a, &tmap_b, &tmap_c, &tmap_tail);
    smem.init_barriers(detail::ring_full_arrivals(epi), Release::kArrivals, kClusterCtas > 1);
  }
  if constexpr (kClusterCtas > 1) detail::cluster_sync_after_init(); else __syncthreads();
  // Launched as a programmatic dependent launch (Options::pdl), the kernel
  // gets here while the stream's previous kernel may still run: nothing
  // above touched global memory; from here on A, B and C may be its output.
  cudaGridDependencySynchronize();

  // An M-grouped call (GROUPED): its tiles are the groups' slots
  // (common/m_groups.hpp) by N's blocks, counted from the ends on the
  // device: the host knows only an upper bound (the grid's size).
  __shared__ int first_slot[GROUPED ? kMaxGroups + 1 : 1];
  const GroupedRaster walk_raster = detail::slot_raster<GROUPED>(raster, groups, first_slot, BLOCK_M);
  if constexpr (GROUPED) schedule.num_tiles = walk_raster.num_tiles();
  // An M-grouped tile's group and rows (its slot is t.m_block).
  const auto group_rows = [&](const TileCoord& t) {
    return detail::locate(groups, first_slot, t.m_block, BLOCK_M);
  };

  if (warpgroup == 0) {
    // ======================= producer: one thread fills the ring =======================
    if constexpr (!kSmallM) setmaxnreg_dec<40>();  // (two consumers need the registers)
    if (wg_thread < 32 && detail::elect_one()) {
      // The loop for a plain call (rank-2 maps, tiles decoded without a
      // batch) or a batched one (rank-3 maps, every load names its batch),
      // with or without operands read once (hinted: MainloopLoad's HINTED):
      // built once each, chosen once, so a plain call's loop holds nothing
      // of the batch, and a call without hints nothing of them.
      const auto produce = [&](auto batched, auto hinted) {
        constexpr bool kBatched = decltype(batched)::value;
        using Load =
            MainloopLoad<BLOCK_N, A_MAJOR, B_MAJOR, CLUSTER_M, CLUSTER_N, BLOCK_M, kBatched, decltype(hinted)::value>;
        // The tiles of the last block-row, whose rows run past M, load A
        // through tmap_tail, whose box holds only the rows there are (tail_bytes of a
        // k-block; the launcher's tail_rows): the rows past M, left as the
        // stage last held them, reach only accumulator rows that are never
        // stored. (Not for clusters or groups: there tmap_tail is tmap_a.)
        // The swapped kernel cuts B's box instead, for the tiles of the last
        // token tile: the tokens past M reach only accumulator columns that
        // are never stored. The map and byte count are picked once a tile, as
        // scalars: a Load picked by reference would put both in local memory.
        constexpr bool kTailMap = kClusterCtas == 1 && !GROUPED;
        constexpr uint32_t kKBlockBytes = Load::Stage::kAKBlockBytes + Load::Stage::kBKBlockBytes;
        // Operands read once (detail::LoadHints) are loaded evict-first.
        const uint64_t policy = decltype(hinted)::value ? detail::l2_evict_first_policy() : 0;
        detail::PersistentTileWalk walk{schedule};
        // The next tile, taken one ahead (a counted take's round trip
        // overlaps this tile's loads).
        const auto take = [&](bool first) {
          if (counted) return take_counted_tile(tile_counter, schedule.num_tiles);
          return first ? walk.first() : walk.next();
        };
        Ring ring;
        for (int tile = take(true), next_tile; tile >= 0; tile = next_tile) {
          next_tile = take(false);
          const TileCoord t = GROUPED ? walk_raster.in_batch(tile) : kBatched ? raster.tile(tile) : raster.in_batch(tile);
          // An M-grouped tile loads its group's rows of A (one matrix) and its
          // group's matrix of B (found once per tile, not per stage).
          const detail::GroupRows rows = GROUPED ? group_rows(t) : detail::GroupRows{};
          const int m0 = GROUPED ? rows.row0 : tile_m0(t);
          // (Compared as x0 > size - BLOCK: x0 + BLOCK overflows int at sizes near 2^31.)
          const bool tail = kTailMap && (SWAP_AB ? tile_n0(t) > kernel_n - BLOCK_N : m0 > kernel_m - BLOCK_M);
          const Load load{tail && !SWAP_AB ? &tmap_tail : &tmap_a, tail && SWAP_AB ? &tmap_tail : &tmap_b, cta_rank,
                          !tail     ? kKBlockBytes
                          : SWAP_AB ? Load::Stage::kAKBlockBytes + tail_bytes
                                    : tail_bytes + Load::Stage::kBKBlockBytes,
                          hints.a_evict_first != 0, hints.b_evict_first != 0, policy};
          for (int ks = 0; ks < num_k_stages; ++ks) {
            detail::wait_barrier(&smem.smem_empty()[ring.index], ring.phase ^ 1, "smem_empty", ring.index,
                                 "producer");
            if (counted && ks == 0) smem.stage_tile()[ring.index] = tile;  // (read by the consumers after smem_full)
            // Arms smem_full[s]; the TMA bytes complete it.
            load(smem.stage(ring.index), &smem.smem_full()[ring.index], m0, tile_n0(t), ks * kKBlocks * kBlockK,
                 GROUPED ? 0 : t.batch * batch_steps.a, (GROUPED ? rows.group : t.batch) * batch_steps.b,
                 stage_count(ks));
            ring.advance();
          }
        }
        if (counted) {
          // The end: the next tile's first stage holds no tile and no bytes.
          detail::wait_barrier(&smem.smem_empty()[ring.index], ring.phase ^ 1, "smem_empty", ring.index,
                               "producer (end of counted tiles)");
          smem.stage_tile()[ring.index] = -1;
          cuda::ptx::mbarrier_arrive(&smem.smem_full()[ring.index]);
          count_out(tile_counter, gridDim.x);
        }
        return ring;
      };
      // (An M-grouped call's maps are rank 3: B holds a matrix per group. It
      // has no hints.)
      const bool hinted = hints.a_evict_first != 0 || hints.b_evict_first != 0;
      const auto produce_batched = [&](auto batched) {
        if constexpr (GROUPED) return produce(batched, std::false_type{});
        else return hinted ? produce(batched, std::true_type{}) : produce(batched, std::false_type{});
      };
      Ring ring = GROUPED || raster.batch > 1 ? produce_batched(std::true_type{}) : produce_batched(std::false_type{});
      // The CTA's last loads are issued: the next kernel of the stream, if
      // launched as a programmatic dependent, may start its launch now (it
      // still waits for this grid to complete before touching memory).
      cudaTriggerProgrammaticLaunchCompletion();
      // In a cluster, this CTA may not exit while the peer can still arrive
      // on its empty barriers or multicast into its ring. Every stage's last
      // fill released by the consumers of both CTAs means both are over: the
      // peer's multicasts into a stage complete its full barrier before this
      // CTA's consumers read and release it, and the peer's consumers arrive
      // here after their last read. (A stage never filled passes at once.)
      // This thread alone waits. A cluster barrier at exit, where half the
      // stall samples of a paired 1024^3 call sat (behind a cluster-scope
      // release fence), cost 0.2-0.7 us more (docs/PERF.md).
      if constexpr (kClusterCtas > 1) {
        for (int i = 0; i < NUM_STAGES; ++i) {
          detail::wait_barrier(&smem.smem_empty()[ring.index], ring.phase ^ 1, "smem_empty", ring.index,
                               "producer (drain)");
          ring.advance();
        }
      }
    }
  } else {
    // ======================= consumers: mainloop and epilogue, tile by tile =======================
    if constexpr (!kSmallM) setmaxnreg_inc<232>();
    const int consumer = warpgroup - 1;
    const bool lane0 = wg_thread % 32 == 0;
    Mma mma(smem.ring, consumer);
    TileEpilogue epilogue(&tmap_c, smem.panels(), smem.c_loaded(), smem.bias_stage(), consumer, wg_thread);
    const Release release(smem.smem_empty(), cta_rank);
    // smem_full[0]'s shared address, held (see MainloopMma): the k-loop waits on smem_full[s] at + 8 s.
    uint32_t full_bars = static_cast<uint32_t>(__cvta_generic_to_shared(smem.smem_full()));
    detail::compute_here(full_bars);
    // The bias is prefetched for every fused epilogue (ACT 0 stands for
    // them all), never for the plain one.
    constexpr int kBiasAct = FUSED ? 0 : detail::kPlainEpilogue;
    // Cooperative consumers take every tile of the CTA's sequence; ping-pong ones alternate.
    ConsumerTileWalk<NUM_STAGES, PINGPONG> walk{schedule, PINGPONG ? consumer : 0};
    const auto take = [&] {
      return walk.take(counted, smem.stage_tile(), full_bars, smem.math_turn(), num_k_stages, consumer, wg_thread == 0);
    };
    for (int tile = take(); tile >= 0; walk.j += walk.kStep, tile = take()) {
      const TileCoord t = GROUPED ? walk_raster.in_batch(tile) : raster.tile(tile);
      // Where this consumer's rows and columns of the tile start: computed
      // now, while the stage loads, not after the mainloop where the
      // compiler would otherwise put it (two integer divisions ahead of the
      // epilogue's first store). An M-grouped tile stores rows up to its
      // group's end only (tile_epi.m).
      constexpr int kConsumerRowStep = PINGPONG ? 0 : 64 * Mma::kMmaRows;  // consumer 1's first row in the tile
      int m0 = tile_m0(t) + consumer * kConsumerRowStep;
      int n0 = tile_n0(t);
      EpilogueParams tile_epi = epi;
      if constexpr (GROUPED) {
        const detail::GroupRows rows = group_rows(t);
        m0 = rows.row0 + consumer * kConsumerRowStep;
        tile_epi.m = rows.row_end;
      }
      detail::compute_here(m0);
      detail::compute_here(n0);
      epilogue.template prefetch_bias<kBiasAct>(epi, m0, n0);
      Ring ring = Ring::at(static_cast<int64_t>(walk.j) * num_k_stages);  // stage 0 of the CTA's j-th tile
      if (walk.kernel_waits_turn(counted) && walk.j > 0)
        detail::wait_barrier(&smem.math_turn()[consumer], walk.turn_parity(), "math_turn", consumer, "consumer");
      // The tile's k-loop into this consumer's first ROWS m64 accumulators
      // (0: none of its rows lie inside M; it still waits for every stage, so
      // that it never runs a ring fill ahead, and hands each back unread).
      const auto mainloop = [&](auto live) {
        constexpr int ROWS = decltype(live)::value;
        int prev_stage = -1;
        for (int ks = 0; ks < num_k_stages; ++ks) {
          detail::wait_barrier(full_bars + ring.index * static_cast<uint32_t>(sizeof(uint64_t)), ring.phase,
                               "smem_full", ring.index, "consumer");
          if constexpr (ROWS == 0) {
            __syncwarp();  // every lane has seen the fill before the stage goes back to be refilled
            if (lane0) release(ring.index);
          } else {
            mma.template issue<ROWS>(ring.index, ks, stage_count(ks));
            mma.template wait<1>();  // the group before this one has read its stage:
            if (prev_stage >= 0 && lane0) release(prev_stage);
            prev_stage = ring.index;
          }
          ring.advance();
        }
        // ping-pong: every full barrier of this tile has been waited for, so the
        // other consumer's next tile is at most one ring fill ahead: its turn.
        if (PINGPONG && wg_thread == 0) cuda::ptx::mbarrier_arrive(&smem.math_turn()[consumer ^ 1]);
        if constexpr (ROWS > 0) {
          mma.template wait<0>();
          if (lane0) release(prev_stage);
        }
      };
      // The tall tile leaves out the wgmmas of accumulators whose rows all
      // lie past the kernel's M (C's N when swapped) (Mma::live_rows: at
      // 129-192 rows of a block-row, consumer 1's second; one uniform branch
      // a tile). The other tiles issue them
      // all: consumer 1 of a 128-row tile with at most 64 rows left its
      // wgmmas out too, and 288-320 x 14336 x 4096 and 320 x 4096 x 14336
      // ran 4-5% slower for it (docs/PERF.md, "The tall tile").
      if constexpr (BLOCK_M == kTallBlockM) {
        const int live = Mma::live_rows(m0, kernel_m);
        if (live == Mma::kMmaRows) mainloop(std::integral_constant<int, Mma::kMmaRows>{});
        else if (live == 1) mainloop(std::integral_constant<int, 1>{});
        else mainloop(std::integral_constant<int, 0>{});
      } else {
        mainloop(std::integral_constant<int, Mma::kMmaRows>{});
      }
      // The tile's batch, from its index (live anyway) rather than held
      // through the mainloop, where one more live register cost the 64-row
      // tiles' k-loop an instruction: a plain call pays a compare here, a
      // batched one a division.
      const int batch = raster.batch > 1 ? tile / raster.tiles_per_batch() : 0;
      // A fused kernel picks its activation here, tile by tile (one uniform
      // branch): one tile loop, an epilogue per activation. (Picked around
      // the whole tile loop, the mainloop was copied per activation too,
      // and the silu copy's warps waited on instruction fetch at one tile
      // per CTA twice as long as now: docs/PERF.md.)
      const auto store = [&](auto act) {
        epilogue.template store_tile<decltype(act)::value>(mma.acc, GROUPED ? tile_epi : epi, m0, n0, batch);
      };
      if constexpr (FUSED) detail::with_activation(epi.activation, store);
      else store(std::integral_constant<int, detail::kPlainEpilogue>{});
    }
    epilogue.finish();
  }
#elif defined(__CUDA_ARCH__)
  static_assert(detail::kDependentFalse<Element>,
                "sm90_gemm_persistent is sm_90a code: build its translation units for compute_90a/sm_90a only");
#endif
}

}  // namespace tcgemm::sm90
