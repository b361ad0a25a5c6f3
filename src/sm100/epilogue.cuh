// An sm100 epilogue warp's work on one tile: its ROWS rows of the fp32
// accumulator in tensor memory (warp w of the CTA may read lanes 32w..32w+31
// only; 32 rows there, or 16 of a 64-row tile in its first 16 lanes:
// tmem_lane) -> tcgen05.ld -> alpha (and beta * C) in fp32 -> one rounding ->
// a ROWS x 64 swizzled panel -> TMA store, clipped at the edges by the tensor map
// (or element by element where TMA cannot clip exactly, and 16 bytes at a
// time by the warp's threads for the 32-column last panel of a 96-wide tile:
// common/device/epilogue.cuh).
//
// Each warp double-buffers its panels (b = panel buffer):
//
//   tensor memory -> tcgen05.ld -> panel[b] -> TMA store -> (bulk read done) -> panel[b]
//   (beta != 0)  TMA load of C -> c_loaded[b] -> ld.shared -> panel[b]
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "common/device/epilogue.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "sm100/shared_storage.cuh"
#include "sm100/tcgen05.cuh"
#include "sm100/umma_desc.hpp"

namespace tcgemm::sm100 {

// An epilogue warp's hand-back of accumulator buffer `acc`: its tcgen05.lds
// of it have completed (tcgen05.wait::ld), so the MMAs of a later tile may
// overwrite it. One arrival per warp on the leader's acc_empty (4 warps x the
// CTAs of the group), from lane 0 after the whole warp fenced.
__device__ __forceinline__ void release_accumulator(uint32_t leader_acc_empty, int acc, int lane) {
  cuda::ptx::tcgen05_fence_before_thread_sync();
  __syncwarp();
  if (lane == 0) detail::mbarrier_arrive_remote_cluster(leader_acc_empty + acc * 8);
}

// GROUP_ROWS: an M-grouped call's tiles, whose rows end at their group's
// end (epi.m, set per tile) where C goes on: a panel that runs past it is
// copied out by the warp's threads, row-checked, not stored by TMA.
// ROWS: the rows this warp stores (epilogue_rows: 32, or 16 of a 64-row
// tile, whose panels C's map stores in boxes of 16 rows); lane r holds row
// r, and the lanes past ROWS load rows of nothing and write none.
template <typename Element, int BLOCK_N, bool GROUP_ROWS = false, int ROWS = kEpiPanelRows>
struct Epilogue {
  // 64-column panels; a width that is not whole panels (96) ends with a
  // narrower one of kLastPanelCols, staged in a panel buffer like the others
  // but stored by the warp's threads (detail::store_panel_narrow): the C
  // map's box is 64 columns and would write over the next tile.
  static constexpr int kFullPanels = BLOCK_N / kEpiPanelCols;
  static constexpr int kLastPanelCols = BLOCK_N % kEpiPanelCols;
  static_assert(kLastPanelCols % 32 == 0, "the last panel is whole 32-column tcgen05.lds");
  static_assert(ROWS == 32 || ROWS == 16, "a warp's quarter of 128 or 64 rows");
  static constexpr int kPanelBytes = ROWS * kEpiPanelCols * 2;  // one ROWS x 64 output panel

  const CUtensorMap* tmap_c;
  uint8_t* panels;     // every epilogue warp's panel buffers
  uint64_t* c_loaded;  // every epilogue warp's c_loaded barriers
  uint32_t tmem_base;         // the allocation's address
  uint32_t leader_acc_empty;  // the leader CTA's acc_empty[0], a shared::cluster address
  int warp;                   // 0-3: this warp's rows and tensor-memory lanes
  int lane;
  int panel_use = 0;      // panels stored so far by this warp
  uint32_t c_phases = 0;  // bit b: phase of c_loaded[warp][b]

  // Stores accumulator buffer `acc` as the rows of C from row0 (this warp's
  // first) and the columns from n0, of batch `batch` (0 for a plain call).
  // ACT: detail::kPlainEpilogue, or the fused epilogue's activation
  // (detail::with_activation).
  template <int ACT>
  __device__ __forceinline__ void store_tile(int acc, const detail::EpilogueParams& epi, int row0, int n0,
                                             int batch) {
#pragma unroll 1
    for (int p = 0; p < kFullPanels; ++p) store_panel<ACT, kEpiPanelCols>(acc, epi, row0, n0, batch, p * kEpiPanelCols);
    if constexpr (kLastPanelCols != 0)
      store_panel<ACT, kLastPanelCols>(acc, epi, row0, n0, batch, kFullPanels * kEpiPanelCols);
  }

  // Hands accumulator buffer `acc` back to the MMA issuer: this warp's
  // tcgen05.lds of it have completed (tcgen05.wait::ld in store_tile), so the
  // MMAs of a later tile may overwrite it. One of the arrivals (4 warps x the
  // CTAs of the group) on the leader's acc_empty.
  __device__ __forceinline__ void release(int acc) const { release_accumulator(leader_acc_empty, acc, lane); }

  // Shared memory must outlive the reads of the last stores.
  __device__ __forceinline__ void finish() const {
    if (lane == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{});
  }

 private:
  // The panel of COLS columns (64, or the narrower last one) `tile_col`
  // columns into the tile.
  template <int ACT, int COLS>
  __device__ __forceinline__ void store_panel(int acc, const detail::EpilogueParams& epi, int row0, int n0, int batch,
                                              int tile_col) {
    constexpr int kLoads = COLS / 32;  // 32-column tcgen05.lds per row
    const uint32_t panel_addr =
        static_cast<uint32_t>(__cvta_generic_to_shared(panels)) + warp * kEpiBuffers * kPanelBytes;
    const int col0 = n0 + tile_col;
    if (row0 >= epi.m || col0 >= epi.n) return;  // nothing of this panel is inside C
    const int buf = panel_use % kEpiBuffers;
    const uint32_t buf_addr = panel_addr + buf * kPanelBytes;
    uint8_t* buf_ptr = panels + (warp * kEpiBuffers + buf) * kPanelBytes;
    // The store that last used this buffer has finished reading it.
    if (lane == 0) cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<kEpiBuffers - 1>{});
    __syncwarp();
    const bool read_c = epi.beta != 0.0f;
    if (read_c)
      detail::load_c_panel(tmap_c, epi, col0, row0, batch, buf_ptr, kPanelBytes, &c_loaded[warp * kEpiBuffers + buf],
                           lane == 0, c_phases, buf);
    // The bias of the panel's columns, one per lane and 32-column load
    // (col0 + lane, col0 + 32 + lane), loaded before the accumulators and
    // handed to every lane by shuffles: each lane's row needs all of them.
    float bias[kLoads] = {};
    if constexpr (ACT != detail::kPlainEpilogue) {
#pragma unroll
      for (int l = 0; l < kLoads; ++l) bias[l] = detail::bias_at<Element>(epi, col0 + 32 * l + lane);
    }
    // Row `lane` of the panel: COLS fp32 accumulators, 32 columns a load.
    uint32_t v[kLoads][32];
    const uint32_t col = static_cast<uint32_t>(acc * acc_columns(BLOCK_N) + tile_col);
#pragma unroll
    for (int l = 0; l < kLoads; ++l) cuda::ptx::tcgen05_ld_32x32b(v[l], tmem_addr(tmem_base, warp * 32, col + 32 * l));
    cuda::ptx::tcgen05_wait_ld();
#pragma unroll
    for (int chunk = 0; chunk < COLS / 8; ++chunk) {
      float x[8];
      if constexpr (ACT != detail::kPlainEpilogue) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
          x[i] = detail::pre_activation(epi.alpha, __uint_as_float(v[chunk / 4][(chunk % 4) * 8 + i]),
                                        __shfl_sync(0xffffffffu, bias[chunk / 4], (chunk % 4) * 8 + i));
        detail::activate_all<ACT>(x);
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) x[i] = epi.alpha * __uint_as_float(v[chunk / 4][(chunk % 4) * 8 + i]);
      }
      if (ROWS == 32 || lane < ROWS) {
        const uint32_t addr = buf_addr + detail::swizzled_offset(lane, chunk * 8);
        if (read_c) {
          const uint4 old = ld_shared_v4(addr);
          detail::add_beta_c<Element>(x, epi.beta, {old.x, old.y, old.z, old.w});
        }
        st_shared_v4(addr, detail::pack2<Element>(x[0], x[1]), detail::pack2<Element>(x[2], x[3]),
                     detail::pack2<Element>(x[4], x[5]), detail::pack2<Element>(x[6], x[7]));
      }
    }
    if constexpr (COLS == kEpiPanelCols)
      detail::store_panel<Element, ROWS, 32, GROUP_ROWS>(tmap_c, epi, row0, col0, batch, buf_ptr, lane, lane == 0,
                                                         [] { __syncwarp(); });
    else
      detail::store_panel_narrow<Element, ROWS, 32, COLS>(epi, row0, col0, batch, buf_ptr, lane, lane == 0,
                                                          [] { __syncwarp(); });
    ++panel_use;
  }
};

// What the epilogues that store C straight from registers (RegisterEpilogue,
// SwapEpilogue) hold: the same members as Epilogue, in its order, so the
// kernel builds every kind alike (`TileEpilogue epilogue{...}`), and the
// same hand-back of an accumulator; no panels, no TMA store, so nothing to
// wait for at the end.
struct RegisterStores {
  const CUtensorMap* tmap_c;  // (unused: no TMA store)
  uint8_t* panels;            // (unused: no panels)
  uint64_t* c_loaded;         // (unused: C is read by each thread)
  uint32_t tmem_base;
  uint32_t leader_acc_empty;
  int warp;
  int lane;

  // As Epilogue::release: this warp's loads of `acc` have completed.
  __device__ __forceinline__ void release(int acc) const { release_accumulator(leader_acc_empty, acc, lane); }

  __device__ __forceinline__ void finish() const {}
};

// The epilogue of the single-CTA tiles narrower than one 64-column panel
// (BLOCK_N 8, 16, 32, 40 or 48: decoding): each thread holds one row of its
// warp's ROWS (32, or the first 16 lanes' of a 64-row tile: tmem_lane) and
// stores its BLOCK_N values straight to C, 8 columns (16 bytes) at a time
// (detail::store_row_run: the same fp32 alpha/beta arithmetic and single
// rounding as the panel epilogue; RegisterStores: no panels, no TMA store).
template <typename Element, int BLOCK_N, int ROWS = kEpiPanelRows>
struct RegisterEpilogue : RegisterStores {
  static_assert(BLOCK_N % 8 == 0 && BLOCK_N <= 48 && BLOCK_N != 24,
                "one tcgen05.ld of 8, 16 or 32 columns per row, or 32 then 8 or 16");
  static_assert(ROWS == 32 || ROWS == 16, "a warp's quarter of 128 or 64 rows");
  // Columns of the first load (32 or the whole width) and of the second (40: 8, 48: 16).
  static constexpr int kCols0 = BLOCK_N < 32 ? BLOCK_N : 32;
  static constexpr int kCols1 = BLOCK_N - kCols0;
  // Bias values per lane: column n0 + lane, and n0 + 32 + lane for 48.
  static constexpr int kBiasRegs = (BLOCK_N + 31) / 32;

  // Stores accumulator buffer `acc` as the rows of C from row0 (this warp's
  // first; this lane's is row0 + lane) and the columns from n0, of batch
  // `batch` (0 for a plain call).
  // ACT: detail::kPlainEpilogue, or the fused epilogue's activation
  // (detail::with_activation).
  template <int ACT>
  __device__ __forceinline__ void store_tile(int acc, const detail::EpilogueParams& epi, int row0, int n0,
                                             int batch) {
    uint32_t v[BLOCK_N];
    // Every lane of the warp takes part in the loads (.sync.aligned), rows past M too.
    const uint32_t taddr = tmem_addr(tmem_base, warp * 32, static_cast<uint32_t>(acc * acc_columns(BLOCK_N)));
    cuda::ptx::tcgen05_ld_32x32b(*reinterpret_cast<uint32_t(*)[kCols0]>(&v[0]), taddr);
    if constexpr (kCols1 != 0)
      cuda::ptx::tcgen05_ld_32x32b(*reinterpret_cast<uint32_t(*)[kCols1]>(&v[kCols0]), taddr + kCols0);
    cuda::ptx::tcgen05_wait_ld();
    const int row = row0 + lane;
    if constexpr (ACT != detail::kPlainEpilogue) {
      // Lane j loads column n0 + j's bias (and n0 + 32 + j's) and the
      // shuffles hand it to every lane (each lane's row needs all BLOCK_N):
      // before any lane leaves.
      float bias[kBiasRegs];
#pragma unroll
      for (int r = 0; r < kBiasRegs; ++r)
        bias[r] = 32 * r + lane < BLOCK_N ? detail::bias_at<Element>(epi, n0 + 32 * r + lane) : 0.0f;
      float x[BLOCK_N];
#pragma unroll
      for (int j = 0; j < BLOCK_N; ++j)
        x[j] = detail::pre_activation(epi.alpha, __uint_as_float(v[j]), __shfl_sync(0xffffffffu, bias[j / 32], j % 32));
      if (lane >= ROWS || row >= epi.m) return;
      detail::activate_all<ACT>(x);
      store_row(x, epi, row, n0, batch);
    } else {
      if (lane >= ROWS || row >= epi.m) return;
      float x[BLOCK_N];
#pragma unroll
      for (int j = 0; j < BLOCK_N; ++j) x[j] = epi.alpha * __uint_as_float(v[j]);
      store_row(x, epi, row, n0, batch);
    }
  }

 private:
  // This lane's row of the tile, 8 columns (16 bytes) at a time.
  __device__ __forceinline__ void store_row(float (&x)[BLOCK_N], const detail::EpilogueParams& epi, int row, int n0,
                                            int batch) const {
    Element* c_row = detail::c_matrix<Element>(epi, batch) + static_cast<int64_t>(row) * epi.ldc;
#pragma unroll
    for (int j = 0; j < BLOCK_N; j += 8) {
      float run[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) run[i] = x[j + i];
      detail::store_row_run<Element, 4>(c_row, n0 + j, true, epi, run);
    }
  }

};

// The epilogue of the swapped tiles (Sm100TileConfig::swap_ab), whose
// accumulator holds C^T: lane r of warp w holds one of C's columns (the
// kernel's row, col0 + r, col0 this warp's first) and its BLOCK_N
// accumulator columns are C's rows from row0. Read 32 of them a load (then
// 16 for 144, 176 and 208), each value gets the other epilogues'
// arithmetic (alpha, the bias of its column, the activation; beta * C and
// one rounding in store_pair), then neighbouring lanes trade values so that
// each stores two adjacent columns of one row in one 4-byte access: the even
// lane row j, the odd lane row j + 1; a warp's store covers 64 contiguous
// bytes of a row (RegisterStores: no panels, no TMA store).
template <typename Element, int BLOCK_N>
struct SwapEpilogue : RegisterStores {
  static_assert(BLOCK_N % 16 == 0 && BLOCK_N > 128 && BLOCK_N <= 256,
                "the swapped tiles' widths: tcgen05 N in steps of 16 at M = 128");
  static constexpr int kLoads = BLOCK_N / 32;    // 32-column tcgen05.lds
  static constexpr int kRestCols = BLOCK_N % 32;  // then one of 16 (or none)

  // Stores accumulator buffer `acc` as C's columns from col0 (this warp's
  // first: the kernel's row) and rows from row0 (the kernel's column), of
  // batch `batch` (0 for a plain call). ACT: detail::kPlainEpilogue, or the
  // fused epilogue's activation.
  template <int ACT>
  __device__ __forceinline__ void store_tile(int acc, const detail::EpilogueParams& epi, int col0, int row0,
                                             int batch) {
    const int col = col0 + lane;
    float bias = 0.0f;
    if constexpr (ACT != detail::kPlainEpilogue) bias = detail::bias_at<Element>(epi, col);
    Element* c = detail::c_matrix<Element>(epi, batch);
    const uint32_t taddr = tmem_addr(tmem_base, warp * 32, static_cast<uint32_t>(acc * acc_columns(BLOCK_N)));
#pragma unroll 1
    for (int l = 0; l < kLoads; ++l) {
      uint32_t v[32];
      __syncwarp();  // (tcgen05.ld is .sync.aligned: the whole warp, after the row-checked stores)
      cuda::ptx::tcgen05_ld_32x32b(v, taddr + 32 * l);
      cuda::ptx::tcgen05_wait_ld();
      store_rows<ACT>(v, epi, c, col, row0 + 32 * l, bias);
    }
    if constexpr (kRestCols != 0) {
      uint32_t v[kRestCols];
      __syncwarp();
      cuda::ptx::tcgen05_ld_32x32b(v, taddr + 32 * kLoads);
      cuda::ptx::tcgen05_wait_ld();
      store_rows<ACT>(v, epi, c, col, row0 + 32 * kLoads, bias);
    }
  }

 private:
  // Rows row0 .. row0 + ROWS - 1 of this lane's column `col`, from its
  // accumulator values v.
  template <int ACT, int ROWS>
  __device__ __forceinline__ void store_rows(const uint32_t (&v)[ROWS], const detail::EpilogueParams& epi,
                                             Element* c, int col, int row0, float bias) const {
    const bool even = lane % 2 == 0;
    const int pair_col = col - lane % 2;  // the pair's first column: this lane's or its left neighbour's
#pragma unroll
    for (int j = 0; j < ROWS; j += 2) {
      float x0, x1;  // this column's values in rows j and j + 1
      if constexpr (ACT != detail::kPlainEpilogue) {
        x0 = detail::activate(detail::pre_activation(epi.alpha, __uint_as_float(v[j]), bias), ACT);
        x1 = detail::activate(detail::pre_activation(epi.alpha, __uint_as_float(v[j + 1]), bias), ACT);
      } else {
        x0 = epi.alpha * __uint_as_float(v[j]);
        x1 = epi.alpha * __uint_as_float(v[j + 1]);
      }
      // The even lane keeps row j and takes its neighbour's (the next
      // column's); the odd lane keeps row j + 1 and takes its neighbour's
      // (the previous column's). Every lane trades, rows past M too.
      const float theirs = __shfl_xor_sync(0xffffffffu, even ? x1 : x0, 1);
      const int row = row0 + j + (even ? 0 : 1);
      if (row < epi.m)
        detail::store_pair(c + static_cast<int64_t>(row) * epi.ldc, pair_col, epi, even ? x0 : theirs,
                           even ? theirs : x1);
    }
  }
};

}  // namespace tcgemm::sm100
