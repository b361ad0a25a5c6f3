// A consumer warpgroup's epilogue in the sm90 kernel: its fp32 accumulators
// (64 rows x BLOCK_N per m64 accumulator) -> alpha (with a fused epilogue:
// + bias, activation) and beta * C in fp32 -> one rounding -> stmatrix into a
// 64x64 swizzled panel -> TMA store, clipped
// at the edges by the tensor map (or element by element where TMA cannot
// clip exactly, and 16 bytes at a time by the threads for the narrower last
// panel of a width that is not whole panels: common/device/epilogue.cuh).
//
// Each consumer double-buffers its panels: a panel is written while the TMA
// store of the one before it still reads the other buffer (the swapped tall
// tile has one buffer: BUFFERS). Barrier flow
// (b = panel buffer):
//
//   acc -> stmatrix -> panel[b] -> TMA store -> (bulk read done) -> panel[b]
//   (beta != 0)  TMA load of C -> c_loaded[b] -> ldmatrix -> panel[b]
//
// TMA stores drain while the next tile's wgmmas run. Where K is short the
// plain epilogue stores a stripe's two panels as one 64 x 128 box instead,
// both buffers holding it (Epilogue::store_pairs).
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "common/device/epilogue.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "sm90/shared_storage.cuh"
#include "sm90/smem_desc.hpp"
#include "sm90/wgmma.cuh"

namespace tcgemm::sm90 {

// GROUP_ROWS: an M-grouped call's tiles (common/m_groups.hpp), whose rows
// end at their group's end (epi.m, set per tile) where C goes on: a panel
// that runs past it is copied out by the threads, row by row, not stored by
// TMA (which clips at C's last row only).
//
// SWAP_AB: the swapped kernel's tiles (TileConfig::swap_ab), whose
// accumulators hold C^T: their rows are C's columns, their columns C's rows.
// Each 64 x 64 block goes into a panel transposed (stmatrix.trans), so the
// panel is in C's orientation and leaves through the same map and stores;
// the bias follows the accumulator rows (row_bias).
//
// BUFFERS: panel buffers per consumer (epi_buffers: 2, or 1 for the
// swapped tall tile, where each panel waits for the store before it).
template <typename Element, int BLOCK_N, int MMA_ROWS, bool GROUP_ROWS = false, bool SWAP_AB = false,
          int BUFFERS = kEpiBuffers>
struct Epilogue {
  static_assert(!(GROUP_ROWS && SWAP_AB), "an M-grouped call runs unswapped");
  static constexpr int kConsumerRows = kBlockM / kNumConsumers;  // 64: one m64 accumulator
  static constexpr int kAccRegs = BLOCK_N / 2;
  // 64-column panels; a width that is not whole panels (96, 112, 136, 144,
  // 152, 160, 176, 200, 208, 224) ends with a narrower one of kLastPanelCols,
  // staged in a panel buffer like the others but stored by the threads
  // (detail::store_panel_narrow): the tensor map's box is 64 columns, which
  // would write into the next tile.
  static constexpr int kPanelsPerTile = (BLOCK_N + kEpiPanel - 1) / kEpiPanel;
  static constexpr int kLastPanelCols = BLOCK_N - (kPanelsPerTile - 1) * kEpiPanel;
  // Panels are written 16 columns at a time (stmatrix x4); the swapped
  // kernel's widths 8 past a multiple of 16 (136, 152, 200) end with 8 (x2).
  static_assert(kLastPanelCols % 16 == 0 || (SWAP_AB && kLastPanelCols % 8 == 0),
                "whole 16-column groups (swapped: 8-column groups)");
  static_assert(kConsumerRows == 64, "one wgmma m64 per consumer warpgroup");
  // Paired stores (store_pairs): whole pairs of 64-column panels, both of a
  // consumer's buffers to hold one, C's rows in order (unswapped, not
  // M-grouped). Must agree with stores_panel_pairs (sm90_config.hpp), which
  // the host asks before it encodes the pair map: the kernel checks.
  static constexpr bool kPairs =
      !SWAP_AB && !GROUP_ROWS && BUFFERS == 2 && kPanelsPerTile % 2 == 0 && kLastPanelCols == kEpiPanel;

  const CUtensorMap* tmap_c;
  uint8_t* panels;      // every consumer's panel buffers
  uint64_t* c_loaded;   // every consumer's c_loaded barriers
  float* bias_stage;    // this consumer's staged bias: one panel's 64 columns in fp32
  uint32_t panel_addr;  // shared address of this consumer's first buffer
  int consumer;
  int wg_thread;        // this thread's index in the warpgroup
  int barrier_id;       // named barrier over this warpgroup
  // Where this lane's stmatrix/ldmatrix row of 16-column group 0 lives in a
  // 64x64 panel (swizzled_offset; group jj is swizzled_step16 of it).
  uint32_t frag_offset;
  // The same in a panel pair's left half (paired stores: store_pairs; the
  // right half's is this ^ detail::kPairedRightHalf).
  uint32_t pair_offset;
  int panel_use = 0;       // panels stored so far by this consumer
  // Bit b: phase of c_loaded[consumer][b]. A bitmask, not an array: the
  // buffer index is only known at run time when a tile has an odd number
  // of panels, and a run-time-indexed array would live in local memory.
  uint32_t c_phases = 0;

  __device__ __forceinline__ Epilogue(const CUtensorMap* tmap, uint8_t* all_panels, uint64_t* all_c_loaded,
                                      float* all_bias_stages, int consumer_, int wg_thread_)
      : tmap_c(tmap),
        panels(all_panels),
        c_loaded(all_c_loaded),
        bias_stage(all_bias_stages + consumer_ * kEpiPanel),
        panel_addr(static_cast<uint32_t>(__cvta_generic_to_shared(all_panels)) +
                   consumer_ * BUFFERS * kPanelBytes),
        consumer(consumer_),
        wg_thread(wg_thread_),
        barrier_id(1 + consumer_),
        frag_offset(fragment_offset(wg_thread_)),
        pair_offset(detail::paired_swizzled_offset(wg_thread_ / 32 * 16 + wg_thread_ % 8 + 8 * (wg_thread_ % 32 / 8 % 2),
                                                   8 * (wg_thread_ % 32 / 16))) {}

  // Where lane l's stmatrix row lives in a 64x64 panel. Unswapped: row
  // (warp * 16 + l % 8 + 8 * (l / 8 % 2)), columns 8 * (l / 16): the four 8x8
  // matrices of 16 rows x 16 columns. Swapped, the same four matrices land
  // transposed: accumulator columns (C's rows) down the panel, l % 8 + 8 *
  // (l / 16), and accumulator rows (C's columns) across, warp * 16 + 8 * (l /
  // 8 % 2).
  static __device__ __forceinline__ uint32_t fragment_offset(int wg_thread) {
    const int warp = wg_thread / 32, lane = wg_thread % 32;
    if constexpr (SWAP_AB) return detail::swizzled_offset(lane % 8 + 8 * (lane / 16), warp * 16 + 8 * (lane / 8 % 2));
    return detail::swizzled_offset(warp * 16 + lane % 8 + 8 * (lane / 8 % 2), 8 * (lane / 16));
  }

  // The fused epilogue's staged bias element of this thread (threads 0-63)
  // for column panel `staged_p` of the tile being stored (store_tile).
  float staged = 0.0f;
  int staged_p = -1;
  __device__ __forceinline__ void load_staged(const detail::EpilogueParams& epi, int n0, int p) {
    if (wg_thread < kEpiPanel) staged = detail::bias_at<Element>(epi, n0 + p * kEpiPanel + wg_thread);
    staged_p = p;
  }

  // The swapped kernel's bias: this thread's two accumulator rows (C's
  // columns m0 + warp * 16 + lane / 4 and 8 further) of each m64 accumulator.
  float2 row_bias[MMA_ROWS] = {};

  // Called with the tile's first row and column (of this consumer's
  // accumulators) before its mainloop: the first panel's bias element (the
  // swapped kernel's: all of its row bias) is loaded while the tile's
  // k-blocks run.
  template <int ACT>
  __device__ __forceinline__ void prefetch_bias(const detail::EpilogueParams& epi, int m0, int n0) {
    if constexpr (ACT != detail::kPlainEpilogue) {
      if constexpr (SWAP_AB) {
        const int row = m0 + (wg_thread / 32) * 16 + wg_thread % 32 / 4;
#pragma unroll
        for (int r = 0; r < MMA_ROWS; ++r)
          row_bias[r] = make_float2(detail::bias_at<Element>(epi, row + r * kConsumerRows),
                                    detail::bias_at<Element>(epi, row + r * kConsumerRows + 8));
      } else {
        load_staged(epi, n0, 0);
      }
    }
  }

  // Stores the tile whose first row (of this consumer's accumulators) is m0
  // and first column n0, of batch `batch` (0 for a plain call). ACT:
  // detail::kPlainEpilogue, or the fused epilogue's activation
  // (detail::with_activation).
  template <int ACT>
  __device__ __forceinline__ void store_tile(const float (&acc)[MMA_ROWS][kAccRegs], const detail::EpilogueParams& epi,
                                             int m0, int n0, int batch) {
    // A plain epilogue with alpha = 1, beta = 0 (a plain product, bmm): no
    // multiply by alpha (exact: 1 * x is x) and no code for C's load in the
    // panel loop. Where a tile is mostly its epilogue (a short K) that is a
    // third of the per-panel instructions. One uniform branch per tile. (Not
    // for the fused epilogue: a second copy of its panel loop for every
    // activation makes the ping-pong kernels spill.)
    if constexpr (ACT == detail::kPlainEpilogue) {
      if constexpr (kPairs) {
        if (epi.paired) {
          if (epi.alpha == 1.0f && epi.beta == 0.0f) return store_pairs<true>(acc, epi, m0, n0, batch);
          return store_pairs<false>(acc, epi, m0, n0, batch);
        }
      }
      if (epi.alpha == 1.0f && epi.beta == 0.0f) return store_panels<ACT, true>(acc, epi, m0, n0, batch);
    }
    store_panels<ACT, false>(acc, epi, m0, n0, batch);
  }

 private:
  // UNIT_SCALE: alpha = 1 and beta = 0 (plain epilogue only).
  template <int ACT, bool UNIT_SCALE>
  __device__ __forceinline__ void store_panels(const float (&acc)[MMA_ROWS][kAccRegs],
                                               const detail::EpilogueParams& epi, int m0, int n0, int batch) {
    // The fused epilogue's bias goes through shared memory, a panel's 64
    // columns at a time: threads 0-63 each load one element (bounds- and
    // null-checked, widened to fp32: detail::bias_at) and store it to
    // bias_stage before the panel's barrier; after it every thread reads its
    // columns as fp32 pairs. Per thread that is one load a panel instead of
    // eight bounds-checked pair loads with their addresses (about 20
    // instructions a pair). The element of the next panel is loaded while this
    // one is computed and stored, the first panel's before the tile's
    // mainloop (prefetch_bias): `staged`, for column panel `staged_p`. The
    // swapped kernel's bias is per accumulator row: row_bias, loaded there.
    //
    // Panel (r, p) holds accumulator r's 64 rows by the tile's columns 64 p
    // on (64 of them, or kLastPanelCols in the narrower last panel). Its place
    // in C: (row0, col0); the swapped kernel's accumulator rows are C's
    // columns, so there the panel holds C's rows n0 + 64 p on by 64 columns,
    // written transposed.
#pragma unroll
    for (int r = 0; r < MMA_ROWS; ++r)
#pragma unroll
      for (int p = 0; p < kPanelsPerTile; ++p) {
        const int row0 = SWAP_AB ? n0 + p * kEpiPanel : m0 + r * kConsumerRows;
        const int col0 = SWAP_AB ? m0 + r * kConsumerRows : n0 + p * kEpiPanel;
        // Nothing of this panel is inside C (the tile hangs over M or N).
        if (row0 >= epi.m || col0 >= epi.n) continue;
        const int buf = panel_use % BUFFERS;
        const uint32_t buf_addr = panel_addr + buf * kPanelBytes;
        // The store that last used this buffer must have finished reading it
        // (bulk groups complete in order; allow the other buffer's store).
        if (wg_thread == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<BUFFERS - 1>{});
        constexpr bool kStagedBias = ACT != detail::kPlainEpilogue && !SWAP_AB;
        if constexpr (kStagedBias) {
          if (staged_p != p) load_staged(epi, n0, p);  // (not prefetched: a call without prefetch_bias)
          // Every reader of the previous panel's bias has passed that
          // panel's store barrier (store_panel) before this thread got here.
          if (wg_thread < kEpiPanel) bias_stage[wg_thread] = staged;
        }
        detail::named_barrier_sync(barrier_id, 128);
        // This thread's 16 columns of the panel: a pair per 8-column group
        // (2jj or 2jj + 1).
        float2 bias[kEpiPanel / 8];
        if constexpr (kStagedBias) {
#pragma unroll
          for (int g = 0; g < kEpiPanel / 8; ++g)
            bias[g] = reinterpret_cast<const float2*>(bias_stage)[4 * g + wg_thread % 4];
          // The next panel's, while this one is computed: the next column
          // panel of this row if it is inside N, else the first of the next
          // row (none after the tile's last panel: prefetch_bias loads the
          // next tile's).
          if (r + 1 < MMA_ROWS || p + 1 < kPanelsPerTile)
            load_staged(epi, n0, p + 1 < kPanelsPerTile && col0 + kEpiPanel < epi.n ? p + 1 : 0);
        }
        // This panel's share of the tile's columns (a multiple of 16, or of 8 for the swapped widths 136,
        // 152 and 200; known once the loop is unrolled).
        const int panel_cols = p + 1 < kPanelsPerTile ? kEpiPanel : kLastPanelCols;
        uint8_t* buf_ptr = panels + (consumer * BUFFERS + buf) * kPanelBytes;
        // (The c_loaded barriers keep kEpiBuffers slots a consumer whatever BUFFERS is: barrier_bytes.)
        uint64_t* loaded = &c_loaded[consumer * kEpiBuffers + buf];
        const bool read_c = !UNIT_SCALE && epi.beta != 0.0f;
        if (read_c)
          detail::load_c_panel(tmap_c, epi, col0, row0, batch, buf_ptr, kPanelBytes, loaded, wg_thread == 0, c_phases,
                               buf);
#pragma unroll
        for (int jj = 0; jj < kEpiPanel / 16; ++jj) {
          if (16 * jj >= panel_cols) break;
          // Accumulator columns 16*jj .. 16*jj+15 of this panel: j = 2 groups of 8, or the one
          // group left at the end of a swapped width 8 past a multiple of 16 (its values 0-3).
          const int jc = p * (kEpiPanel / 8) + 2 * jj;
          const bool one_group = SWAP_AB && 16 * jj + 8 == panel_cols;
          const int values = one_group ? 4 : 8;
          float v[8];
          if (one_group) v[4] = v[5] = v[6] = v[7] = 0.0f;  // (not stored)
          if constexpr (ACT != detail::kPlainEpilogue) {
            // v[i]'s column: 8-column group jc + i / 4, pair 2 * (lane % 4), element i % 2; its row 8
            // further down for i % 4 >= 2 (the swapped kernel's bias).
#pragma unroll
            for (int i = 0; i < values; ++i) {
              const float2 b = SWAP_AB ? row_bias[r] : bias[2 * jj + i / 4];
              v[i] = detail::pre_activation(epi.alpha, acc[r][4 * jc + i],
                                            SWAP_AB ? (i % 4 < 2 ? b.x : b.y) : (i % 2 == 0 ? b.x : b.y));
            }
            detail::activate_all<ACT>(v);
          } else {
#pragma unroll
            for (int i = 0; i < values; ++i)
              v[i] = UNIT_SCALE ? acc[r][4 * jc + i] : epi.alpha * acc[r][4 * jc + i];
          }
          // The next 16 columns; swapped, 16 of C's rows further down the panel (the same swizzle phase).
          const uint32_t addr = SWAP_AB ? buf_addr + frag_offset + jj * 16 * detail::kSwizzleBytes
                                        : detail::swizzled_step16(buf_addr + frag_offset, jj);
          if (read_c) {
            uint32_t c[4];
            if constexpr (SWAP_AB) {
              if (one_group) {
                ldmatrix_x2_trans(addr, c[0], c[1]);
                c[2] = c[3] = 0u;  // (not stored)
              } else {
                ldmatrix_x4_trans(addr, c[0], c[1], c[2], c[3]);
              }
            } else {
              ldmatrix_x4(addr, c[0], c[1], c[2], c[3]);
            }
            detail::add_beta_c<Element>(v, epi.beta, c);
          }
          const uint32_t w0 = detail::pack2<Element>(v[0], v[1]), w1 = detail::pack2<Element>(v[2], v[3]);
          const uint32_t w2 = detail::pack2<Element>(v[4], v[5]), w3 = detail::pack2<Element>(v[6], v[7]);
          if constexpr (SWAP_AB) {
            if (one_group) stmatrix_x2_trans(addr, w0, w1);
            else stmatrix_x4_trans(addr, w0, w1, w2, w3);
          } else {
            stmatrix_x4(addr, w0, w1, w2, w3);
          }
        }
        const auto sync = [&] { detail::named_barrier_sync(barrier_id, 128); };
        // The narrower last panel is copied by the threads: its 64-wide TMA box would write over the
        // next tile (swapped: over the next tile's rows).
        if (panel_cols == kEpiPanel)
          detail::store_panel<Element, kEpiPanel, 128, GROUP_ROWS>(tmap_c, epi, row0, col0, batch, buf_ptr,
                                                                   wg_thread, wg_thread == 0, sync);
        else if constexpr (SWAP_AB)
          detail::store_panel_narrow<Element, kLastPanelCols, 128, kEpiPanel>(epi, row0, col0, batch, buf_ptr,
                                                                              wg_thread, wg_thread == 0, sync);
        else
          detail::store_panel_narrow<Element, kEpiPanel, 128, kLastPanelCols>(epi, row0, col0, batch, buf_ptr,
                                                                              wg_thread, wg_thread == 0, sync);
        ++panel_use;
      }
  }

  // The plain epilogue where the call stores C a pair of panels at a time
  // (epi.paired, set where K is short: sm90::pairs_c; the host encoded C's
  // map as {64 columns, N / 64 blocks, rows [, batch]} with a box of 2
  // blocks by 64 rows: detail::tma_output_c_pairs). Each 64-row stripe's two
  // 64-column panels go into the consumer's two buffers as one 64 x 128 box
  // (paired_swizzled_offset: row by row, 256 bytes a row) and leave in one
  // TMA store, whose rows are 256 bytes of C each: such stores wrote C 12%
  // faster than two 64 x 64 boxes on an H200, 3% on an H100
  // (tools/microbench/write_stream.cu; docs/PERF.md, "Paired stores"). The
  // pair fills both buffers, so each waits for the store of the one before
  // (cp.async.bulk.wait_group.read 0). N is a multiple of 64 here, so the
  // map's blocks end at N: a pair past N, or its right half, is clipped by
  // TMA exactly, and C's rows by the map's last row (no ragged edges, no
  // copies by the threads). beta != 0 loads C's pair the same way.
  template <bool UNIT_SCALE>
  __device__ __forceinline__ void store_pairs(const float (&acc)[MMA_ROWS][kAccRegs], const detail::EpilogueParams& epi,
                                              int m0, int n0, int batch) {
    uint8_t* const pair = panels + consumer * BUFFERS * kPanelBytes;
    const bool read_c = !UNIT_SCALE && epi.beta != 0.0f;
#pragma unroll
    for (int r = 0; r < MMA_ROWS; ++r)
#pragma unroll
      for (int p = 0; p < kPanelsPerTile; p += 2) {
        const int row0 = m0 + r * kConsumerRows, col0 = n0 + p * kEpiPanel;
        if (row0 >= epi.m || col0 >= epi.n) continue;
        // The pair's last store must have finished reading the buffers.
        if (wg_thread == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
        detail::named_barrier_sync(barrier_id, 128);
        if (read_c) load_c_pair(epi, col0, row0, batch, pair, &c_loaded[consumer * kEpiBuffers]);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          if (half == 1 && col0 + kEpiPanel >= epi.n) break;  // (the right half is past N: clipped, not computed)
          const uint32_t offset = half == 0 ? pair_offset : pair_offset ^ detail::kPairedRightHalf;
#pragma unroll
          for (int jj = 0; jj < kEpiPanel / 16; ++jj) {
            const int jc = (p + half) * (kEpiPanel / 8) + 2 * jj;
            float v[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) v[i] = UNIT_SCALE ? acc[r][4 * jc + i] : epi.alpha * acc[r][4 * jc + i];
            const uint32_t addr = detail::swizzled_step16(panel_addr + offset, jj);
            if (read_c) {
              uint32_t c[4];
              ldmatrix_x4(addr, c[0], c[1], c[2], c[3]);
              detail::add_beta_c<Element>(v, epi.beta, c);
            }
            stmatrix_x4(addr, detail::pack2<Element>(v[0], v[1]), detail::pack2<Element>(v[2], v[3]),
                        detail::pack2<Element>(v[4], v[5]), detail::pack2<Element>(v[6], v[7]));
          }
        }
        cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        detail::named_barrier_sync(barrier_id, 128);
        if (wg_thread == 0) {
          if (epi.batched) {
            const int32_t coord[4] = {0, col0 / kEpiPanel, row0, batch};
            detail::store_c_box(tmap_c, epi, coord, pair);
          } else {
            const int32_t coord[3] = {0, col0 / kEpiPanel, row0};
            detail::store_c_box(tmap_c, epi, coord, pair);
          }
          cuda::ptx::cp_async_bulk_commit_group();
        }
      }
  }

  // C's pair at (row0, col0) into the pair buffers (beta != 0), on the
  // consumer's first c_loaded barrier (bit 0 of c_phases). The pair map's
  // coordinates: {0, col0 / 64, row0}, and the batch for a batched call.
  __device__ __forceinline__ void load_c_pair(const detail::EpilogueParams& epi, int col0, int row0, int batch,
                                              void* dst, uint64_t* loaded) {
    if (epi.batched) {
      const int32_t coord[4] = {0, col0 / kEpiPanel, row0, batch};
      detail::load_c_box(tmap_c, coord, dst, 2 * kPanelBytes, loaded, wg_thread == 0, c_phases, 0);
    } else {
      const int32_t coord[3] = {0, col0 / kEpiPanel, row0};
      detail::load_c_box(tmap_c, coord, dst, 2 * kPanelBytes, loaded, wg_thread == 0, c_phases, 0);
    }
  }

 public:
  // Shared memory must outlive the reads of the last stores; the writes
  // themselves complete before the grid does.
  __device__ __forceinline__ void finish() const {
    if (wg_thread == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }
};

// The epilogue of the 64-row (small-M) tiles: straight from the accumulator
// registers to C, bounds-checked, no shared memory. Each quad of threads
// (one row) swaps its column pairs by shuffles so that each thread stores
// 8 adjacent columns, 16 bytes (detail::store_row_groups); a width that is
// not whole fours of 8 columns ends with two groups (4 columns a thread) or
// one (as column pairs). Those
// tiles are chosen where C is small beside B (M <= 64 rows against all of
// B), so storing at once matters more than a staged panel's coalescing, and
// shared memory is kept for the ring. The same arithmetic as Epilogue:
// alpha * acc (+ beta * C) in fp32, rounded once to nearest even. Needs C's
// base 16-byte aligned and ldc a multiple of 8 (what TMA needs too).
//
// ROWS: the tile's rows, 64, or 8 for the decode tile, whose accumulator rows
// 8-63 repeat rows 0-7 (sm90/mma.cuh) and are never stored: only warp 0
// stores (its threads hold rows lane / 4, and the same 8 rows again in their
// second half), whatever the call's M.
template <typename Element, int BLOCK_N, int ROWS = kSmallBlockM>
struct RegisterEpilogue {
  static constexpr int kAccRegs = BLOCK_N / 2;
  static_assert(BLOCK_N % 8 == 0, "the accumulators come in 8-column groups");
  static_assert(ROWS == kSmallBlockM || ROWS == kDecodeBlockM, "64 rows, or the decode tile's 8");
  // The halves of a thread's accumulators it stores: rows `row` and `row + 8`,
  // or (8 rows) `row` only.
  static constexpr int kHalves = ROWS == kDecodeBlockM ? 1 : 2;
  static constexpr bool kPairs = false;  // (no panels: Epilogue::kPairs)

  int row;  // this thread's first accumulator row in the tile; its second is 8 rows down
  int col;  // this thread's first column in each 8-column group

  // The same arguments as Epilogue's, of which it needs the thread's index
  // in the warpgroup (the wgmma accumulator layout: sm90/wgmma.cuh).
  __device__ __forceinline__ RegisterEpilogue(const CUtensorMap*, uint8_t*, uint64_t*, float*, int, int wg_thread)
      : row((wg_thread / 32) * 16 + (wg_thread % 32) / 4), col(2 * (wg_thread % 4)) {}

  template <int ACT>
  __device__ __forceinline__ void prefetch_bias(const detail::EpilogueParams&, int, int) {}  // (loads its own)

  template <int ACT>
  __device__ __forceinline__ void store_tile(const float (&acc)[1][kAccRegs], const detail::EpilogueParams& epi,
                                             int m0, int n0, int batch) const {
    if constexpr (ROWS == kDecodeBlockM) {
      if (row >= ROWS) return;  // (warps 1-3 hold copies of rows 0-7)
    }
    Element* const c = detail::c_matrix<Element>(epi, batch);
    // Up to 8 of the 8-column groups at a time (kStep divides them; the
    // fused epilogue loads their bias first, both rows' columns at once),
    // then each row: four groups at a time through a quad exchange, 16 bytes
    // a thread (detail::store_row_groups), two where a step leaves two
    // (widths 16 and 48: 8 bytes a thread), and a last single group (widths
    // 8 and 40) as column pairs.
    constexpr int kGroups = BLOCK_N / 8;
    constexpr int kStep = kGroups <= 8 ? kGroups : kGroups % 8 == 0 ? 8 : 4;
    constexpr int kQuadGroups = kStep / 4 * 4;
    constexpr bool kTwoGroups = kStep % 4 >= 2;
    static_assert(kGroups % kStep == 0, "whole steps of 8-column groups");
#pragma unroll
    for (int j0 = 0; j0 < kGroups; j0 += kStep) {
      float v[kHalves][2 * kStep];  // [row h][2 * group + element]
#pragma unroll
      for (int j = 0; j < kStep; ++j) {
        float2 b = {};
        if constexpr (ACT != detail::kPlainEpilogue) b = detail::bias_pair_at<Element>(epi, n0 + 8 * (j0 + j) + col);
#pragma unroll
        for (int e = 0; e < 2; ++e)
#pragma unroll
          for (int h = 0; h < kHalves; ++h) {
            const float a = acc[0][4 * (j0 + j) + 2 * h + e];
            v[h][2 * j + e] = ACT != detail::kPlainEpilogue
                                  ? detail::pre_activation(epi.alpha, a, e == 0 ? b.x : b.y)
                                  : epi.alpha * a;
          }
      }
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        const int r = m0 + row + 8 * h;
        const bool row_ok = r < epi.m;  // (the quad stores take every lane: no early exit)
        if constexpr (ACT != detail::kPlainEpilogue) detail::activate_all<ACT>(v[h]);
        Element* c_row = c + static_cast<int64_t>(row_ok ? r : 0) * epi.ldc;
#pragma unroll
        for (int q = 0; q < kQuadGroups; q += 4) {
          float x[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) x[i] = v[h][2 * q + i];
          detail::store_row_groups<Element, 4>(c_row, n0 + 8 * (j0 + q), col / 2, row_ok, epi, x);
        }
        if constexpr (kTwoGroups) {
          float x[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) x[i] = v[h][2 * kQuadGroups + i];
          detail::store_row_groups<Element, 2>(c_row, n0 + 8 * (j0 + kQuadGroups), col / 2, row_ok, epi, x);
        }
        if (!row_ok) continue;
#pragma unroll
        for (int j = kQuadGroups + (kTwoGroups ? 2 : 0); j < kStep; ++j)
          detail::store_pair(c_row, n0 + 8 * (j0 + j) + col, epi, v[h][2 * j], v[h][2 * j + 1]);
      }
    }
  }

  __device__ __forceinline__ void finish() const {}
};

}  // namespace tcgemm::sm90
