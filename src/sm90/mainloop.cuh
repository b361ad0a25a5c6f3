// The sm90 producer's work on one stage of the operand ring: arm the stage's
// full barrier with the bytes the stage will receive, then start the TMA
// loads of A's and B's k-block into it (the decode tile: of the stage's
// k-blocks, up to kDecodeStageKBlocks, in K order; those wholly past K in the
// last stage are neither loaded nor counted).
//
// Layouts: a K-major operand is one box (K contiguous, 64 wide: one 128-byte
// swizzle line); an MN-major one is loaded in 64-wide panels of M or N, each
// spanning the k-block's 64 lines, or 32- or 16-wide panels (64- and 32-byte
// swizzle) where the tile is narrower (common/smem_layout.hpp: mn_panel_cols).
//
// CLUSTER_M = 2: two CTAs of a cluster take vertically adjacent tiles (same
// n_block, m_blocks 2p and 2p+1) and share B: each loads half of the B
// k-block and multicasts it into both CTAs' rings, halving B's L2->SM
// traffic. CLUSTER_N = 2: horizontally adjacent tiles (same m_block) share
// A the same way. Each destination's full barrier counts the bytes, so every
// CTA still expects a whole stage.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "common/device/ptx_wrappers.cuh"
#include "sm90/shared_storage.cuh"

namespace tcgemm::sm90 {

// BATCHED: the call is a strided batch, its maps rank 3: every load names
// the operand's batch coordinate (a plain call's loads are built without it).
// HINTED: the call has an operand read once (detail::LoadHints), whose loads
// carry an L2 policy; a call without one is built without the choice, so
// that its producer issues each load straight after its wait (a branch per
// load cost the narrow 64-row tiles up to 8% on an H100, where the producer's
// loop sets the pace: docs/PERF.md, part 25).
template <int BLOCK_N, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, int CLUSTER_N, int BLOCK_M = kBlockM,
          bool BATCHED = false, bool HINTED = false>
struct MainloopLoad {
  // B's k-block: BLOCK_N columns, or whole 64-column panels (b_slot_cols).
  static constexpr int kBCols = b_slot_cols(BLOCK_N, BLOCK_M, B_MAJOR == Major::MN);
  using Stage = StageLayout<BLOCK_N, BLOCK_M, kBCols>;
  static_assert(B_MAJOR == Major::K || detail::mn_panel_cols(BLOCK_N) != 0,
                "an MN-major B is loaded in whole 16-, 32- or 64-wide panels");
  static_assert(CLUSTER_M == 1 || (CLUSTER_M == 2 && BLOCK_N % 128 == 0),
                "a 2-CTA cluster splits B into two halves of whole 64-wide panels");
  static_assert(CLUSTER_N == 1 || (CLUSTER_N == 2 && CLUSTER_M == 1 && BLOCK_M == kBlockM),
                "a 2-CTA cluster along N splits the 128-row A into two halves of 64 rows");
  static_assert(Stage::kKBlocks == 1 || (CLUSTER_M == 1 && CLUSTER_N == 1 && A_MAJOR == Major::K &&
                                         B_MAJOR == Major::K),
                "stages of several k-blocks (the decode tile): A and B K-major, no cluster");

  const CUtensorMap* tmap_a;
  const CUtensorMap* tmap_b;
  uint32_t cta_rank;  // this CTA's place in the cluster (0 without one)
  // The bytes one k-block brings into a stage: A's k-block and B's
  // (Stage::kStageBytes with one k-block a stage), or fewer where A's box is
  // shorter than the tile (the tiles of the last block-row, A K-major, load
  // only the rows up to M rounded up to 8 through a map of their own: the
  // rows past M are never stored, and zero-filling them costs time:
  // sm90_gemm_launch.cuh, tail_rows), or B's (the swapped kernel's last
  // token tile).
  uint32_t k_block_bytes = Stage::kAKBlockBytes + Stage::kBKBlockBytes;
  // Operands read once (detail::LoadHints; HINTED only): their loads (not
  // the multicast ones) carry `policy`, an L2 evict-first policy.
  bool a_evict_first = false;
  bool b_evict_first = false;
  uint64_t policy = 0;

  // The k-blocks starting at k0 of the tile whose rows start at m0 (this
  // CTA's) and columns at n0, into the stage at `a_dst`; `full` is that
  // stage's full barrier. BATCHED: a_batch and b_batch are the tile's
  // coordinates in A's and B's rank-3 maps (ignored otherwise). `count`: the
  // k-blocks the stage takes, 1 to Stage::kKBlocks (fewer only in a tile's
  // last stage, where K ends).
  __device__ __forceinline__ void operator()(uint8_t* a_dst, uint64_t* full, int m0, int n0, int k0, int a_batch = 0,
                                             int b_batch = 0, int count = 1) const {
    uint8_t* b_dst = a_dst + Stage::kABytes;
    // NOTE: TMA counts the whole box, zero-filled parts included, so the
    // byte count is the same for edge tiles.
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, full,
                                         Stage::kKBlocks == 1 ? k_block_bytes : count * k_block_bytes);
    if constexpr (Stage::kKBlocks > 1) {
      // A's box then B's, k-block by k-block in K order (B's slot after all of A's).
#pragma unroll
      for (int i = 0; i < Stage::kKBlocks; ++i) {
        if (i > 0 && i >= count) break;
        copy(a_dst + i * Stage::kAKBlockBytes, tmap_a, k0 + i * kBlockK, m0, a_batch, full, a_evict_first);
        copy(b_dst + i * Stage::kBKBlockBytes, tmap_b, k0 + i * kBlockK, n0, b_batch, full, b_evict_first);
      }
    } else if constexpr (CLUSTER_M == 1 && CLUSTER_N == 1) {
      load_operand<A_MAJOR, BLOCK_M>(a_dst, tmap_a, full, m0, k0, a_batch, a_evict_first);
      load_operand<B_MAJOR, kBCols>(b_dst, tmap_b, full, n0, k0, b_batch, b_evict_first);
    } else if constexpr (CLUSTER_M == 2) {
      load_operand<A_MAJOR, BLOCK_M>(a_dst, tmap_a, full, m0, k0, a_batch, a_evict_first);
      load_half<B_MAJOR, BLOCK_N>(b_dst, tmap_b, full, n0, k0, b_batch);
    } else {
      load_half<A_MAJOR, BLOCK_M>(a_dst, tmap_a, full, m0, k0, a_batch);
      load_operand<B_MAJOR, kBCols>(b_dst, tmap_b, full, n0, k0, b_batch, b_evict_first);
    }
  }

 private:
  // An MN-major operand's panel of a k-block, `cols` wide: kBlockK lines of
  // `cols` elements.
  static constexpr int panel_bytes(int cols) { return cols * kBlockK * 2; }

  // ROWS rows (of M or N) from row0 of one operand's k-block at k0, into
  // dst, without multicast: K-major, one box; MN-major, one box per panel
  // (the map's box is one panel: tma_operand_a / tma_operand_b); with
  // `policy` where `hinted`.
  template <Major MAJOR, int ROWS>
  __device__ __forceinline__ void load_operand(uint8_t* dst, const CUtensorMap* tmap, uint64_t* full, int row0, int k0,
                                               int batch, bool hinted) const {
    if constexpr (MAJOR == Major::K) {
      copy(dst, tmap, k0, row0, batch, full, hinted);
    } else {
      constexpr int kPanel = detail::mn_panel_cols(ROWS);
#pragma unroll
      for (int p = 0; p < ROWS / kPanel; ++p)
        copy(dst + p * panel_bytes(kPanel), tmap, row0 + kPanel * p, k0, batch, full, hinted);
    }
  }

  // This CTA's half of one operand's k-block (ROWS rows of M or N from row0,
  // shared by the cluster's two CTAs), written at the same offset into both
  // CTAs' rings; each destination's full barrier counts the bytes. K-major:
  // rows [row0 + rank * ROWS/2, +ROWS/2), the map's box being ROWS/2 rows;
  // MN-major: this CTA's half of the 64-wide panels.
  template <Major MAJOR, int ROWS>
  __device__ __forceinline__ void load_half(uint8_t* dst, const CUtensorMap* tmap, uint64_t* full, int row0, int k0,
                                            int batch) const {
    constexpr uint16_t kBothCtas = 0b11;
    if constexpr (MAJOR == Major::K) {
      constexpr int kHalfBytes = ROWS / 2 * kBlockK * 2;
      multicast(dst + cta_rank * kHalfBytes, tmap, k0, row0 + static_cast<int>(cta_rank) * (ROWS / 2), batch, full,
                kBothCtas);
    } else {
      static_assert(ROWS % 128 == 0, "each CTA of the pair loads whole 64-wide panels");
#pragma unroll
      for (int p = 0; p < ROWS / 128; ++p) {
        const int panel = static_cast<int>(cta_rank) * (ROWS / 128) + p;
        multicast(dst + panel * panel_bytes(64), tmap, row0 + 64 * panel, k0, batch, full, kBothCtas);
      }
    }
  }

  // One TMA box at (c0, c1) (and `batch`, when BATCHED) into dst, completing
  // `full`, with `policy` where `hinted`; multicast: into the same offset of
  // every CTA of `ctas`.
  __device__ __forceinline__ void copy(uint8_t* dst, const CUtensorMap* tmap, int c0, int c1, int batch,
                                       uint64_t* full, bool hinted) const {
    const auto load = [&](const auto& c) {
      if (HINTED && hinted) detail::tma_load_with_policy(dst, tmap, c, full, policy);
      else cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, tmap, c, full);
    };
    if constexpr (BATCHED) {
      const int32_t c[3] = {c0, c1, batch};
      load(c);
    } else {
      const int32_t c[2] = {c0, c1};
      load(c);
    }
  }
  __device__ __forceinline__ static void multicast(uint8_t* dst, const CUtensorMap* tmap, int c0, int c1, int batch,
                                                   uint64_t* full, uint16_t ctas) {
    if constexpr (BATCHED) {
      const int32_t c[3] = {c0, c1, batch};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, tmap, c, full, ctas);
    } else {
      const int32_t c[2] = {c0, c1};
      cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, tmap, c, full, ctas);
    }
  }
};

}  // namespace tcgemm::sm90
