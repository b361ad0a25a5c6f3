// sm100_gemm: C = alpha * op(A) @ op(B) + beta * C on Blackwell (sm_100a).
//
// The seed's design (DESIGN.md), generalized to any M, N, K, all four
// layouts, fp16/bf16, alpha/beta and a TMA-store epilogue. One tile is one
// 256 x BLOCK_N MMA (tcgen05.mma.cta_group::2) over a 2-CTA cluster; each CTA
// loads its 128 rows of A and half of the tile's B columns into its own
// shared memory, and receives its 128 rows of the fp32 accumulator in its
// own tensor memory. Warp roles (7 warps):
//
//   warps 0-3  epilogue    tcgen05.ld (warp w: tensor-memory lanes 32w..+31)
//                          -> alpha/beta in fp32 -> round once -> 32x64
//                          swizzled panel -> TMA store (clipped at edges)
//   warp 4     scheduler   Cluster Launch Control (leader CTA only)
//   warp 5     producer    TMA loads of this CTA's A rows and B half
//   warp 6     MMA         allocates tensor memory (both CTAs); in the leader
//                          CTA one lane issues every tcgen05.mma of the pair
//
// Barrier flow (s = ring stage, b = accumulator buffer, r = CLC slot):
//
//   TMA (both CTAs) -> smem_full[s] of the leader (count 1: the leader's
//     expect_tx of both CTAs' bytes) -> MMA -> tcgen05.commit multicast ->
//     smem_empty[s] of both CTAs -> TMA
//   MMA (last k-block of a tile) -> commit multicast -> acc_full[b] of both
//     CTAs -> epilogue -> acc_empty[b] of the leader (4 warps x 2 CTAs) -> MMA
//   scheduler -> try_cancel multicast -> clc_full[r] of both CTAs (armed with
//     expect_tx(16) in each first) -> every role reads the response ->
//     clc_empty[r] of the leader (11 readers) -> scheduler
//
// The two accumulator buffers play the part of the seed's double-buffered
// tensor memory: the MMAs of tile i+1 run while the epilogue drains tile i.
//
// Tile order: the cluster's tiles come from a GroupedRaster index. With
// SCHEDULE == persistent the grid holds as many clusters as fit at once and
// cluster c takes indices c, c + clusters, ... With cluster_launch_control
// the grid has one cluster per tile; a cluster starts with its own index
// (blockIdx.x / 2) and then takes the index of each cluster it cancels, until
// a cancel fails. Pitfalls handled (DESIGN.md): the 16-byte response is read
// as one 128-bit load; the async proxy is fenced between reading a response
// and issuing the next try_cancel; a slot is refilled only after all 11
// readers released it; each CTA's clc_full is armed before the multicast;
// no try_cancel follows a failed one; every role decodes with tile_of() and
// stops at the same response; tensor memory is freed only after a cluster
// barrier, so no MMA of the peer can still write it.
//
// Numerics: each MMA adds 16 products of K per row and column in order into
// the fp32 accumulator; the epilogue rounds once (cvt.rn), as the sm90 kernel.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/barrier.cuh"
#include "common/device/epilogue.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "sm100/sm100_config.hpp"
#include "sm100/tcgen05.cuh"
#include "sm100/umma_desc.hpp"

namespace tcgemm::sm100 {

using detail::EpilogueParams;

// How one role (a warp, or one lane of it) walks the cluster's tiles. Every
// role of both CTAs walks the same sequence.
template <Schedule SCHEDULE>
struct TileWalk;

template <>
struct TileWalk<Schedule::persistent> {
  detail::PersistentSchedule schedule;
  int j = 0;

  __device__ TileWalk(int num_tiles, uint64_t*, const uint4*, uint32_t, const char*)
      : schedule{static_cast<int>(blockIdx.x) / kCtaGroup, static_cast<int>(gridDim.x) / kCtaGroup, num_tiles} {}
  __device__ int first() { return schedule.tile(0); }
  __device__ int next(bool, bool) { return schedule.tile(++j); }
};

template <>
struct TileWalk<Schedule::cluster_launch_control> {
  uint64_t* clc_full;          // this CTA's slots' barriers
  const uint4* response;       // this CTA's response slots
  uint32_t leader_clc_empty;   // shared::cluster address of the leader's clc_empty[0]
  const char* role;            // for the hang report
  int slot = 0;
  uint32_t phase = 0;

  __device__ TileWalk(int, uint64_t* full, const uint4* resp, uint32_t leader_empty, const char* who)
      : clc_full(full), response(resp), leader_clc_empty(leader_empty), role(who) {}
  // The cluster's own tile: one cluster per tile in launch order.
  __device__ int first() { return static_cast<int>(blockIdx.x) / kCtaGroup; }
  // The next response, decoded. `whole_warp`: all 32 lanes call (the
  // epilogue warps), else one lane does; `release` in the one lane that tells
  // the scheduler this role is done with the slot.
  __device__ int next(bool release, bool whole_warp) {
    detail::wait_barrier(&clc_full[slot], phase, "clc_full", slot, role);
    const int tile = tile_of(read_clc_response(&response[slot]));
    // This CTA's generic-proxy read of the slot comes before the next
    // try_cancel's async-proxy write into it (the scheduler fences only its
    // own CTA; the multicast writes this one's slot too).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    // Every lane has read the slot before one lane releases it.
    if (whole_warp) __syncwarp();
    if (release) detail::mbarrier_arrive_remote_cluster(leader_clc_empty + slot * 8);
    if (++slot == kClcSlots) {
      slot = 0;
      phase ^= 1;
    }
    return tile;
  }
};

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, Schedule SCHEDULE>
__global__ void __launch_bounds__(kThreads, 1)
    sm100_gemm(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
               const __grid_constant__ CUtensorMap tmap_c, const GroupedRaster raster, const int num_k_blocks,
               const EpilogueParams epi) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 1000) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  static_assert(is_tile_width(BLOCK_N), "BLOCK_N must be one of kSm100TileConfigs' widths");
  static_assert(valid_2sm_mma_shape(kMmaM, BLOCK_N), "not a tcgen05.mma.cta_group::2 shape");
  static_assert(smem_bytes(BLOCK_N, NUM_STAGES) <= kSmemLimit, "the ring and panels must fit in 227 KiB");
  static_assert(SCHEDULE != Schedule::automatic, "the launcher resolves the schedule");
  static_assert(kBlockK * sizeof(Element) == detail::kSwizzleBytes, "a k-block is one 128-byte swizzle line");

  constexpr int kABytes = kBlockM * kBlockK * 2;                 // 16 KiB: this CTA's 128 rows
  constexpr int kBCols = BLOCK_N / kCtaGroup;                    // this CTA's half of B
  constexpr int kBBytes = kBCols * kBlockK * 2;
  constexpr int kStageBytes = kABytes + kBBytes;
  constexpr int kPanelBytes = kEpiPanelRows * kEpiPanelCols * 2;  // 4 KiB
  constexpr int kPanelsPerTile = BLOCK_N / kEpiPanelCols;
  constexpr uint32_t kTmemCols = tmem_columns(BLOCK_N);
  constexpr uint32_t kIdesc =
      instr_desc_f16(std::is_same_v<Element, __nv_bfloat16>, A_MAJOR, B_MAJOR, kMmaM, BLOCK_N);
  constexpr uint16_t kBothCtas = 0b11;
  // Readers of each CLC response that release it: per CTA the producer and
  // the 4 epilogue warps, and the leader's MMA warp.
  constexpr int kClcReaders = kCtaGroup * (1 + kEpilogueWarps) + 1;

  // ---- shared memory: [ring][epilogue panels][barriers][CLC responses][tmem base]
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  uint8_t* smem = smem_raw + ((1024 - (raw_addr % 1024)) % 1024);
  uint8_t* ring = smem;
  uint8_t* panels = ring + NUM_STAGES * kStageBytes;
  uint64_t* smem_full = reinterpret_cast<uint64_t*>(panels + epilogue_bytes());
  uint64_t* smem_empty = smem_full + NUM_STAGES;
  uint64_t* acc_full = smem_empty + NUM_STAGES;
  uint64_t* acc_empty = acc_full + kAccBuffers;
  uint64_t* c_loaded = acc_empty + kAccBuffers;  // [epilogue warp][panel buffer]
  uint64_t* clc_full = c_loaded + kEpilogueWarps * kEpiBuffers;
  uint64_t* clc_empty = clc_full + kClcSlots;
  uint4* clc_response = reinterpret_cast<uint4*>(clc_empty + kClcSlots);  // 16-byte aligned
  uint32_t* tmem_base_slot = reinterpret_cast<uint32_t*>(clc_response + kClcSlots);

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const uint32_t rank = cuda::ptx::get_sreg_cluster_ctarank();
  const bool leader = rank == 0;

  if (threadIdx.x == 0) {
    detail::prefetch_tensormap(&tmap_a);
    detail::prefetch_tensormap(&tmap_b);
    detail::prefetch_tensormap(&tmap_c);
    const uint32_t full_count = detail::ring_full_arrivals(epi);
    for (int s = 0; s < NUM_STAGES; ++s) {
      cuda::ptx::mbarrier_init(&smem_full[s], full_count);  // the leader producer's expect_tx (+ both CTAs' bytes)
      cuda::ptx::mbarrier_init(&smem_empty[s], 1);  // one tcgen05.commit
    }
    for (int b = 0; b < kAccBuffers; ++b) {
      cuda::ptx::mbarrier_init(&acc_full[b], 1);                           // one tcgen05.commit
      cuda::ptx::mbarrier_init(&acc_empty[b], kCtaGroup * kEpilogueWarps);  // every epilogue warp of the pair
    }
    for (int i = 0; i < kEpilogueWarps * kEpiBuffers; ++i) cuda::ptx::mbarrier_init(&c_loaded[i], 1);
    for (int r = 0; r < kClcSlots; ++r) {
      cuda::ptx::mbarrier_init(&clc_full[r], 1);  // the scheduler's expect_tx (+ 16 response bytes)
      cuda::ptx::mbarrier_init(&clc_empty[r], kClcReaders);
    }
    // Visible to the async proxy and to the peer CTA (its TMA completions,
    // commits and arrivals land here).
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  if (warp == kMmaWarp) {
    // Both CTAs' MMA warps allocate together (cta_group::2): the same columns
    // in both, as the pair's MMAs write both at the same address.
    cuda::ptx::tcgen05_alloc(cuda::ptx::cta_group_2, tmem_base_slot, kTmemCols);
    cuda::ptx::tcgen05_relinquish_alloc_permit(cuda::ptx::cta_group_2);
  }
  cuda::ptx::tcgen05_fence_before_thread_sync();
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
  cuda::ptx::tcgen05_fence_after_thread_sync();
  const uint32_t tmem_base = *reinterpret_cast<volatile uint32_t*>(tmem_base_slot);

  // Leader-CTA barriers as shared::cluster addresses (the peer arrives on them).
  const uint32_t leader_smem_full = detail::map_to_cta(smem_full, 0);
  const uint32_t leader_acc_empty = detail::map_to_cta(acc_empty, 0);
  const uint32_t leader_clc_empty = detail::map_to_cta(clc_empty, 0);
  const int num_tiles = raster.num_tiles();

  if (warp == kSchedulerWarp) {
    // ======================= scheduler (CLC, leader only) =======================
    if constexpr (SCHEDULE == Schedule::cluster_launch_control) {
      if (leader && detail::elect_one()) {
        int slot = 0;
        uint32_t phase = 0;
        for (;;) {
          // Every reader released what this slot last held.
          detail::wait_barrier<true>(&clc_empty[slot], phase ^ 1, "clc_empty", slot, "scheduler");
          // Their generic-proxy reads come before the async-proxy write.
          cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
          for (uint32_t r = 0; r < kCtaGroup; ++r)
            detail::mbarrier_arrive_expect_tx_remote(detail::map_to_cta(&clc_full[slot], r), kClcResponseBytes);
          cuda::ptx::clusterlaunchcontrol_try_cancel_multicast(&clc_response[slot], &clc_full[slot]);
          detail::wait_barrier(&clc_full[slot], phase, "clc_full", slot, "scheduler");
          const bool more = read_clc_response(&clc_response[slot]).canceled;
          if (++slot == kClcSlots) {
            slot = 0;
            phase ^= 1;
          }
          if (!more) break;  // never try_cancel again after a failure
        }
      }
    }
  } else if (warp == kProducerWarp) {
    // ======================= producer (both CTAs) =======================
    if (detail::elect_one()) {
      TileWalk<SCHEDULE> walk(num_tiles, clc_full, clc_response, leader_clc_empty, "producer");
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = walk.first(); tile >= 0; tile = walk.next(true, false)) {
        const TileCoord t = raster.tile(tile);
        const int m0 = cta_row0(t, static_cast<int>(rank));
        const int n0 = cta_b_col0(t, static_cast<int>(rank), BLOCK_N);
        for (int kb = 0; kb < num_k_blocks; ++kb) {
          detail::wait_barrier(&smem_empty[stage], phase ^ 1, "smem_empty", stage, "producer");
          // NOTE: TMA counts whole boxes, zero-filled parts included, so the
          // byte count is the same for edge tiles.
          if (leader)
            cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                                 cuda::ptx::space_shared, &smem_full[stage],
                                                 kCtaGroup * kStageBytes);
          uint8_t* a_dst = ring + stage * kStageBytes;
          uint8_t* b_dst = a_dst + kABytes;
          const uint32_t full = leader_smem_full + stage * 8;
          const int k0 = kb * kBlockK;
          if constexpr (A_MAJOR == Major::K) {
            tma_load_2d_pair(a_dst, &tmap_a, k0, m0, full);
          } else {
#pragma unroll
            for (int p = 0; p < kBlockM / 64; ++p) tma_load_2d_pair(a_dst + p * (kABytes / 2), &tmap_a, m0 + 64 * p, k0, full);
          }
          if constexpr (B_MAJOR == Major::K) {
            tma_load_2d_pair(b_dst, &tmap_b, k0, n0, full);
          } else {
#pragma unroll
            for (int p = 0; p < kBCols / 64; ++p)
              tma_load_2d_pair(b_dst + p * (kBBytes / (kBCols / 64)), &tmap_b, n0 + 64 * p, k0, full);
          }
          if (++stage == NUM_STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      // Tail: wait until the MMAs have released every stage this CTA filled,
      // so that no tcgen05.commit arrival for this CTA's ring is still in
      // flight when the CTA exits (the arrivals of different commits are not
      // ordered with the acc_full one the epilogue waits for).
      for (int i = 0; i < NUM_STAGES; ++i) {
        detail::wait_barrier(&smem_empty[stage], phase ^ 1, "smem_empty", stage, "producer");
        if (++stage == NUM_STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
  } else if (warp == kMmaWarp) {
    // ======================= MMA issuer (leader only) =======================
    if (leader && detail::elect_one()) {
      TileWalk<SCHEDULE> walk(num_tiles, clc_full, clc_response, leader_clc_empty, "MMA");
      const uint32_t ring_addr = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
      int stage = 0;
      uint32_t phase = 0;
      int acc = 0;
      uint32_t acc_phase = 0;
      for (int tile = walk.first(); tile >= 0; tile = walk.next(true, false)) {
        // The epilogues of both CTAs have drained this accumulator buffer.
        detail::wait_barrier<true>(&acc_empty[acc], acc_phase ^ 1, "acc_empty", acc, "MMA");
        cuda::ptx::tcgen05_fence_after_thread_sync();
        const uint32_t d_tmem = tmem_base + static_cast<uint32_t>(acc * BLOCK_N);
        for (int kb = 0; kb < num_k_blocks; ++kb) {
          detail::wait_barrier(&smem_full[stage], phase, "smem_full", stage, "MMA");
          cuda::ptx::tcgen05_fence_after_thread_sync();
          const uint32_t a_base = ring_addr + stage * kStageBytes;
          const uint32_t b_base = a_base + kABytes;
#pragma unroll
          for (int ks = 0; ks < kBlockK / kMmaK; ++ks) {
            const uint64_t da = operand_desc(A_MAJOR, a_base + ks * detail::k_step_bytes(A_MAJOR), kBlockK);
            const uint64_t db = operand_desc(B_MAJOR, b_base + ks * detail::k_step_bytes(B_MAJOR), kBlockK);
            cuda::ptx::tcgen05_mma(cuda::ptx::kind_f16, cuda::ptx::cta_group_2, d_tmem, da, db, kIdesc,
                                   kb > 0 || ks > 0);
          }
          // When these MMAs have read the stage, both CTAs may refill it.
          cuda::ptx::tcgen05_commit_multicast(cuda::ptx::cta_group_2, &smem_empty[stage], kBothCtas);
          if (++stage == NUM_STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
        // When the tile's MMAs are complete, both CTAs' epilogues may read it.
        cuda::ptx::tcgen05_commit_multicast(cuda::ptx::cta_group_2, &acc_full[acc], kBothCtas);
        if (++acc == kAccBuffers) {
          acc = 0;
          acc_phase ^= 1;
        }
      }
    }
  } else {
    // ======================= epilogue (warps 0-3, both CTAs) =======================
    TileWalk<SCHEDULE> walk(num_tiles, clc_full, clc_response, leader_clc_empty, "epilogue");
    const uint32_t panel_addr =
        static_cast<uint32_t>(__cvta_generic_to_shared(panels)) + warp * kEpiBuffers * kPanelBytes;
    const uint32_t lane_tmem = tmem_base + (static_cast<uint32_t>(warp * 32) << 16);  // this warp's 32 lanes
    int acc = 0;
    uint32_t acc_phase = 0;
    int panel_use = 0;     // panels stored so far by this warp
    uint32_t c_phases = 0; // bit b: phase of c_loaded[warp][b]
    for (int tile = walk.first(); tile >= 0; tile = walk.next(lane == 0, true)) {
      const TileCoord t = raster.tile(tile);
      const int row0 = cta_row0(t, static_cast<int>(rank)) + warp * kEpiPanelRows;
      const int n0 = t.n_block * BLOCK_N;
      detail::wait_barrier(&acc_full[acc], acc_phase, "acc_full", acc, "epilogue");
      cuda::ptx::tcgen05_fence_after_thread_sync();
#pragma unroll 1
      for (int p = 0; p < kPanelsPerTile; ++p) {
        const int col0 = n0 + p * kEpiPanelCols;
        if (row0 >= epi.m || col0 >= epi.n) continue;  // nothing of this panel is inside C
        const int buf = panel_use % kEpiBuffers;
        const uint32_t buf_addr = panel_addr + buf * kPanelBytes;
        uint8_t* buf_ptr = panels + (warp * kEpiBuffers + buf) * kPanelBytes;
        // The store that last used this buffer has finished reading it.
        if (lane == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<kEpiBuffers - 1>{});
        __syncwarp();
        const int32_t c_coord[2] = {col0, row0};
        const bool read_c = epi.beta != 0.0f;
        if (read_c)
          detail::load_c_panel(&tmap_c, c_coord, buf_ptr, kPanelBytes, &c_loaded[warp * kEpiBuffers + buf],
                               lane == 0, c_phases, buf);
        // Row `lane` of the panel: 64 fp32 accumulators, 2 loads of 32 columns.
        uint32_t v[2][32];
        const uint32_t col = static_cast<uint32_t>(acc * BLOCK_N + p * kEpiPanelCols);
        cuda::ptx::tcgen05_ld_32x32b(v[0], lane_tmem + col);
        cuda::ptx::tcgen05_ld_32x32b(v[1], lane_tmem + col + 32);
        cuda::ptx::tcgen05_wait_ld();
#pragma unroll
        for (int chunk = 0; chunk < kEpiPanelCols / 8; ++chunk) {
          float x[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) x[i] = epi.alpha * __uint_as_float(v[chunk / 4][(chunk % 4) * 8 + i]);
          const uint32_t addr = buf_addr + detail::swizzled_offset(lane, chunk * 8);
          if (read_c) {
            const uint4 old = ld_shared_v4(addr);
            detail::add_beta_c<Element>(x, epi.beta, {old.x, old.y, old.z, old.w});
          }
          st_shared_v4(addr, detail::pack2<Element>(x[0], x[1]), detail::pack2<Element>(x[2], x[3]),
                       detail::pack2<Element>(x[4], x[5]), detail::pack2<Element>(x[6], x[7]));
        }
        detail::store_panel<Element, kEpiPanelRows, 32>(&tmap_c, epi, row0, col0, buf_ptr, lane, lane == 0,
                                                        [] { __syncwarp(); });
        ++panel_use;
      }
      // Every tcgen05.ld of this buffer has completed (wait_ld above): the
      // MMA warp may overwrite it with a later tile.
      cuda::ptx::tcgen05_fence_before_thread_sync();
      __syncwarp();
      if (lane == 0) detail::mbarrier_arrive_remote_cluster(leader_acc_empty + acc * 8);
      if (++acc == kAccBuffers) {
        acc = 0;
        acc_phase ^= 1;
      }
    }
    // Shared memory must outlive the reads of the last stores.
    if (lane == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }

  // ---- teardown: no CTA exits, and no tensor memory is freed, while the
  // peer can still write into it (MMAs, multicasts, arrivals).
  __syncwarp();
  cuda::ptx::tcgen05_fence_before_thread_sync();
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
  if (warp == kMmaWarp) {
    cuda::ptx::tcgen05_fence_after_thread_sync();
    cuda::ptx::tcgen05_dealloc(cuda::ptx::cta_group_2, tmem_base, kTmemCols);
  }
#endif
}

}  // namespace tcgemm::sm100
