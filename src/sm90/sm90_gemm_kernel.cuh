// sm90_gemm_persistent: C = alpha * op(A) @ op(B) + beta * C on Hopper.
//
// One CTA per SM, 3 warpgroups, looping over output tiles in grouped raster
// order (common/tile_order.hpp). Roles:
//
//   producer  (warpgroup 0, one thread)  TMA loads of A and B k-blocks into a
//                                        NUM_STAGES-deep shared-memory ring
//   consumers (warpgroups 1, 2)          wgmma m64nNk16, 64 rows of the
//                                        128-row tile each; fp32 accumulators
//                                        in registers; then the epilogue:
//                                        registers -> stmatrix -> 64x64 panel
//                                        -> TMA store (clipped at the edges)
//
// Barrier flow (s = ring stage, b = epilogue panel buffer):
//
//   TMA -> smem_full[s] -> wgmma -> smem_empty[s] -> TMA
//   acc -> stmatrix -> panel[b] -> TMA store -> (bulk read done) -> panel[b]
//   (beta != 0)  TMA load of C -> c_loaded[b] -> ldmatrix -> panel[b]
//
// The producer runs ahead across tile boundaries, so the next tile's first
// k-blocks load while the consumers run the epilogue of the current one, and
// TMA stores drain while the next tile's wgmmas run.
//
// CLUSTER_M = 2: two CTAs of a cluster take vertically adjacent tiles (same
// n_block, m_blocks 2p and 2p+1) and share B: each loads half of the B
// k-block and multicasts it into both CTAs' rings, halving B's L2->SM
// traffic. A stage may then be refilled only when the consumers of both CTAs
// released it, so every consumer warp arrives on smem_empty[s] of both CTAs.
//
// PINGPONG: instead of splitting each tile's rows, the two consumers take
// alternate tiles of the CTA's sequence, each computing all 128 rows (two
// m64 accumulators). The producer still fills the ring tile after tile, so
// consumer 1's k-blocks arrive just as consumer 0's run out: the mainloops
// take turns on the tensor cores and each epilogue overlaps the other
// consumer's mainloop (the Hopper analog of the Blackwell kernel's
// double-buffered tensor memory). Ring position of k-block kb of the CTA's j-th tile:
// j * num_k_blocks + kb, whichever consumer takes it. A consumer starts a
// tile's mainloop only when the other has issued all of its previous tile
// (math_turn[c]): mbarrier waits are by phase parity, so a consumer must
// never wait on a stage more than one fill ahead of where the ring is.
//
// Numerics: each consumer issues its k16 steps in K order into one fp32
// accumulator and rounds once (cvt.rn) in the epilogue. Nothing about the
// order depends on M, N, the tile shape or the CTA that owns the tile.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/arch_guard.cuh"
#include "common/device/barrier.cuh"
#include "common/device/epilogue.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "sm90/sm90_config.hpp"
#include "sm90/smem_desc.hpp"
#include "sm90/wgmma.cuh"

namespace tcgemm::sm90 {

using detail::EpilogueParams;
using detail::pack2;
using detail::elect_one;
using detail::map_to_cta;
using detail::mbarrier_arrive_remote;
using detail::named_barrier_sync;
using detail::prefetch_tensormap;

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, bool PINGPONG>
__global__ void __launch_bounds__(kThreads, 1)
    sm90_gemm_persistent(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                         const __grid_constant__ CUtensorMap tmap_c, const GroupedRaster raster,
                         const int num_k_blocks, const EpilogueParams epi) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(is_tile_width(BLOCK_N), "BLOCK_N must be one of kTileWidths");
  static_assert(kBlockK * sizeof(Element) == kSwizzleBytes, "a k-block is one 128-byte swizzle line");
  static_assert(smem_bytes(BLOCK_N, NUM_STAGES) <= kSmemLimit, "the ring and panels must fit in 227 KiB");
  static_assert(CLUSTER_M == 1 || (CLUSTER_M == 2 && BLOCK_N % 128 == 0),
                "a 2-CTA cluster splits B into two halves of whole 64-wide panels");
  static_assert(!PINGPONG || (BLOCK_N == 128 && CLUSTER_M == 1),
                "ping-pong holds 2 x 64 accumulators per thread: 128-wide tiles, no cluster");

  constexpr int kABytes = kBlockM * kBlockK * 2;      // 16 KiB
  constexpr int kBBytes = BLOCK_N * kBlockK * 2;      // 16 or 32 KiB
  constexpr int kStageBytes = kABytes + kBBytes;
  constexpr int kPanelBytes = kEpiPanel * kEpiPanel * 2;  // 8 KiB
  constexpr int kConsumerRows = kBlockM / kNumConsumers;  // 64
  constexpr int kAccRegs = BLOCK_N / 2;                   // per m64 accumulator
  constexpr int kMmaRows = PINGPONG ? 2 : 1;              // m64 accumulators per consumer
  constexpr int kStageReaders = (PINGPONG ? 1 : kNumConsumers) * 4 * CLUSTER_M;  // warps that read a stage
  constexpr int kPanelsPerTile = BLOCK_N / kEpiPanel;
  static_assert(kConsumerRows == 64, "one wgmma m64 per consumer warpgroup");

  // ---- shared memory: [ring stages][epilogue panels][barriers], 1 KiB aligned
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  uint8_t* smem = smem_raw + ((1024 - (raw_addr % 1024)) % 1024);
  uint8_t* ring = smem;
  uint8_t* panels = ring + NUM_STAGES * kStageBytes;
  uint64_t* smem_full = reinterpret_cast<uint64_t*>(panels + kNumConsumers * kEpiBuffers * kPanelBytes);
  uint64_t* smem_empty = smem_full + NUM_STAGES;
  uint64_t* c_loaded = smem_empty + NUM_STAGES;  // [consumer][buffer]
  uint64_t* math_turn = c_loaded + kNumConsumers * kEpiBuffers;  // [consumer], ping-pong only

  const int warpgroup = threadIdx.x / 128;
  const int wg_thread = threadIdx.x % 128;
  // Tiles are handed out per cluster; this CTA takes row `cta_rank` of the
  // cluster's CLUSTER_M block-rows.
  const uint32_t cta_rank = CLUSTER_M > 1 ? cuda::ptx::get_sreg_cluster_ctarank() : 0;
  // The cluster's tiles, in order (the same sequence in both CTAs).
  const detail::PersistentSchedule schedule{static_cast<int>(blockIdx.x) / CLUSTER_M,
                                            static_cast<int>(gridDim.x) / CLUSTER_M, raster.num_tiles()};

  if (threadIdx.x == 0) {
    prefetch_tensormap(&tmap_a);
    prefetch_tensormap(&tmap_b);
    prefetch_tensormap(&tmap_c);
    const uint32_t full_count = detail::ring_full_arrivals(epi);
    for (int s = 0; s < NUM_STAGES; ++s) {
      cuda::ptx::mbarrier_init(&smem_full[s], full_count);  // the producer's arrive + TMA bytes
      // One arrive per consumer warp (of every CTA) that reads the stage.
      cuda::ptx::mbarrier_init(&smem_empty[s], kStageReaders);
    }
    for (int i = 0; i < kNumConsumers * kEpiBuffers; ++i) cuda::ptx::mbarrier_init(&c_loaded[i], 1);
    for (int i = 0; i < kNumConsumers; ++i) cuda::ptx::mbarrier_init(&math_turn[i], 1);
    // Make the initialized barriers visible to the async (TMA) proxy and,
    // in a cluster, to the peer CTA (its multicasts and arrivals land here).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    if constexpr (CLUSTER_M > 1) cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
  if constexpr (CLUSTER_M > 1) {
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
    cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
  } else {
    __syncthreads();
  }

  if (warpgroup == 0) {
    // ======================= producer =======================
    setmaxnreg_dec<40>();
    if (wg_thread < 32 && elect_one()) {
      int stage = 0;
      uint32_t phase = 0;
      for (int j = 0; schedule.tile(j) >= 0; ++j) {
        const TileCoord t = raster.tile(schedule.tile(j));
        const int m0 = (t.m_block * CLUSTER_M + cta_rank) * kBlockM;
        const int n0 = t.n_block * BLOCK_N;
        for (int kb = 0; kb < num_k_blocks; ++kb) {
          detail::wait_barrier(&smem_empty[stage], phase ^ 1, "smem_empty", stage, "producer");
          uint8_t* a_dst = ring + stage * kStageBytes;
          uint8_t* b_dst = a_dst + kABytes;
          uint64_t* full = &smem_full[stage];
          const int k0 = kb * kBlockK;
          // NOTE: TMA counts the whole box, zero-filled parts included, so
          // the byte count is the same for edge tiles.
          cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta,
                                               cuda::ptx::space_shared, full, kStageBytes);
          if constexpr (A_MAJOR == Major::K) {
            const int32_t c[2] = {k0, m0};
            cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, a_dst, &tmap_a, c, full);
          } else {
#pragma unroll
            for (int p = 0; p < kBlockM / 64; ++p) {
              const int32_t c[2] = {m0 + 64 * p, k0};
              cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                              a_dst + p * (kABytes / (kBlockM / 64)), &tmap_a, c, full);
            }
          }
          if constexpr (CLUSTER_M == 1) {
            if constexpr (B_MAJOR == Major::K) {
              const int32_t c[2] = {k0, n0};
              cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, b_dst, &tmap_b, c,
                                              full);
            } else {
#pragma unroll
              for (int p = 0; p < BLOCK_N / 64; ++p) {
                const int32_t c[2] = {n0 + 64 * p, k0};
                cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                                b_dst + p * (kBBytes / (BLOCK_N / 64)), &tmap_b, c, full);
              }
            }
          } else {
            // This CTA's half of B, written at the same offset into both
            // CTAs' rings; each destination's full barrier counts the bytes.
            constexpr uint16_t kBothCtas = 0b11;
            constexpr int kHalfBytes = kBBytes / 2;
            if constexpr (B_MAJOR == Major::K) {
              // Rows (of N) [n0 + rank * BLOCK_N/2, +BLOCK_N/2): the map's box is BLOCK_N/2 rows.
              const int32_t c[2] = {k0, n0 + static_cast<int>(cta_rank) * (BLOCK_N / 2)};
              cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                              b_dst + cta_rank * kHalfBytes, &tmap_b, c, full, kBothCtas);
            } else {
#pragma unroll
              for (int p = 0; p < BLOCK_N / 128; ++p) {
                const int panel = static_cast<int>(cta_rank) * (BLOCK_N / 128) + p;
                const int32_t c[2] = {n0 + 64 * panel, k0};
                cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global,
                                                b_dst + panel * (kBBytes / (BLOCK_N / 64)), &tmap_b, c, full,
                                                kBothCtas);
              }
            }
          }
          if (++stage == NUM_STAGES) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    // ======================= consumers =======================
    setmaxnreg_inc<232>();
    const int consumer = warpgroup - 1;
    const int warp = wg_thread / 32;
    const int lane = wg_thread % 32;
    const int barrier_id = 1 + consumer;  // named barrier over this warpgroup
    const uint32_t ring_addr = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
    const uint32_t panel_addr =
        static_cast<uint32_t>(__cvta_generic_to_shared(panels)) + consumer * kEpiBuffers * kPanelBytes;
    // A's m64 row blocks sit 8 KiB apart in a stage (the second half of a
    // K-major tile, or the second 64-wide panel of an M-major one). This
    // consumer's first row block: its half of the tile, or (ping-pong) row 0.
    constexpr uint32_t kRowBlockBytes = kABytes / 2;
    const uint32_t a_offset = PINGPONG ? 0 : consumer * kRowBlockBytes;

    // Where this lane's stmatrix/ldmatrix row lives in a 64x64 panel.
    const int frag_row = warp * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
    const int frag_col = 8 * (lane / 16);

    float acc[kMmaRows][kAccRegs];
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r)
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) acc[r][i] = 0.0f;
    int panel_use = 0;              // panels stored so far by this consumer
    // Bit b: phase of c_loaded[consumer][b]. A bitmask, not an array: the
    // buffer index is only known at run time when a tile has an odd number
    // of panels, and a run-time-indexed array would live in local memory.
    uint32_t c_phases = 0;
    int turns = 0;  // ping-pong: hand-overs this consumer has waited for

    // The peer CTA's smem_empty barriers (cluster only), as shared::cluster addresses.
    uint32_t peer_empty = 0;
    if constexpr (CLUSTER_M > 1) peer_empty = map_to_cta(smem_empty, cta_rank ^ 1);
    auto release = [&](int s) {
      cuda::ptx::mbarrier_arrive(&smem_empty[s]);
      if constexpr (CLUSTER_M > 1) mbarrier_arrive_remote(peer_empty + s * sizeof(uint64_t));
    };

    // The CTA's j-th tile is schedule.tile(j); cooperative consumers take
    // every j, ping-pong consumers alternate.
    for (int j = PINGPONG ? consumer : 0; schedule.tile(j) >= 0; j += PINGPONG ? 2 : 1) {
      const TileCoord t = raster.tile(schedule.tile(j));
      const int m0 = (t.m_block * CLUSTER_M + cta_rank) * kBlockM + (PINGPONG ? 0 : consumer * kConsumerRows);
      const int n0 = t.n_block * BLOCK_N;
      const int64_t ring_pos = static_cast<int64_t>(j) * num_k_blocks;
      int stage = static_cast<int>(ring_pos % NUM_STAGES);
      uint32_t phase = static_cast<uint32_t>((ring_pos / NUM_STAGES) & 1);

      // ---- ping-pong: wait for the other consumer to have issued its tile
      if constexpr (PINGPONG) {
        if (j > 0) detail::wait_barrier(&math_turn[consumer], turns++ & 1, "math_turn", consumer, "consumer");
      }

      // ---- mainloop: k-blocks in order, one wgmma group in flight
      int prev_stage = -1;
      for (int kb = 0; kb < num_k_blocks; ++kb) {
        detail::wait_barrier(&smem_full[stage], phase, "smem_full", stage, "consumer");
        const uint32_t a_base = ring_addr + stage * kStageBytes + a_offset;
        const uint32_t b_base = ring_addr + stage * kStageBytes + kABytes;
#pragma unroll
        for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < kBlockK / 16; ++ks) {
          const uint64_t db = operand_desc(B_MAJOR, b_base + ks * k_step_bytes(B_MAJOR), kBlockK);
#pragma unroll
          for (int r = 0; r < kMmaRows; ++r) {
            const uint64_t da =
                operand_desc(A_MAJOR, a_base + r * kRowBlockBytes + ks * k_step_bytes(A_MAJOR), kBlockK);
            wgmma_m64nNk16<Element, BLOCK_N, A_MAJOR == Major::MN, B_MAJOR == Major::MN>(
                acc[r], da, db, (kb > 0 || ks > 0) ? 1 : 0);
          }
        }
        wgmma_commit_group();
        // The group before this one has finished reading its stage.
        wgmma_wait_group<1>();
#pragma unroll
        for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
        if (prev_stage >= 0 && lane == 0) release(prev_stage);
        prev_stage = stage;
        if (++stage == NUM_STAGES) {
          stage = 0;
          phase ^= 1;
        }
      }
      // ping-pong: every full barrier of this tile has been waited for, so the
      // other consumer's next tile is at most one ring fill ahead: its turn.
      if constexpr (PINGPONG) {
        if (wg_thread == 0) cuda::ptx::mbarrier_arrive(&math_turn[consumer ^ 1]);
      }
      wgmma_wait_group<0>();
#pragma unroll
      for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
      if (lane == 0) release(prev_stage);

      // ---- epilogue: (64 rows x BLOCK_N) per accumulator, in 64x64 panels, double buffered
#pragma unroll
      for (int r = 0; r < kMmaRows; ++r)
#pragma unroll
      for (int p = 0; p < kPanelsPerTile; ++p) {
        const int row0 = m0 + r * kConsumerRows;
        const int panel_n0 = n0 + p * kEpiPanel;
        // Nothing of this panel is inside C (the tile hangs over M or N).
        if (row0 >= epi.m || panel_n0 >= epi.n) continue;
        const int buf = panel_use % kEpiBuffers;
        const uint32_t buf_addr = panel_addr + buf * kPanelBytes;
        // The store that last used this buffer must have finished reading it
        // (bulk groups complete in order; allow the other buffer's store).
        if (wg_thread == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<kEpiBuffers - 1>{});
        named_barrier_sync(barrier_id, 128);
        const int32_t c_coord[2] = {panel_n0, row0};
        uint8_t* buf_ptr = panels + (consumer * kEpiBuffers + buf) * kPanelBytes;
        uint64_t* loaded = &c_loaded[consumer * kEpiBuffers + buf];
        const bool read_c = epi.beta != 0.0f;
        if (read_c) detail::load_c_panel(&tmap_c, c_coord, buf_ptr, kPanelBytes, loaded, wg_thread == 0, c_phases, buf);
#pragma unroll
        for (int jj = 0; jj < kEpiPanel / 16; ++jj) {
          // Accumulator columns 16*jj .. 16*jj+15 of this panel: j = 2 groups of 8.
          const int jc = p * (kEpiPanel / 8) + 2 * jj;
          float v[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) v[i] = epi.alpha * acc[r][4 * jc + i];
          const uint32_t addr = buf_addr + swizzled_offset(frag_row, 16 * jj + frag_col);
          if (read_c) {
            uint32_t c[4];
            ldmatrix_x4(addr, c[0], c[1], c[2], c[3]);
            detail::add_beta_c<Element>(v, epi.beta, c);
          }
          stmatrix_x4(addr, pack2<Element>(v[0], v[1]), pack2<Element>(v[2], v[3]), pack2<Element>(v[4], v[5]),
                      pack2<Element>(v[6], v[7]));
        }
        detail::store_panel<Element, kEpiPanel, 128>(&tmap_c, epi, row0, panel_n0, buf_ptr, wg_thread, wg_thread == 0,
                                                     [&] { named_barrier_sync(barrier_id, 128); });
        ++panel_use;
      }
    }
    // Shared memory must outlive the reads of the last stores; the writes
    // themselves complete before the grid does.
    if (wg_thread == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }
  if constexpr (CLUSTER_M > 1) {
    // Neither CTA may exit while its peer can still multicast into its ring
    // or arrive on its barriers. Every thread of both CTAs gets here.
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);
    cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
  }
#elif defined(__CUDA_ARCH__)
  static_assert(detail::kDependentFalse<Element>,
                "sm90_gemm_persistent is sm_90a code: build its translation units for compute_90a/sm_90a only");
#endif
}

}  // namespace tcgemm::sm90
