// A consumer warpgroup's tensor-core work in the sm90 kernel: wgmma m64nNk16
// from the ring's stages into fp32 accumulators in registers, and the
// hand-back of each stage to the producers once its wgmmas have read it.
//
// Cooperative: the two consumers split each 128-row tile, 64 rows each (one
// m64 accumulator), or each 256-row (tall) tile, 128 rows each (two m64
// accumulators: at most 128 wide, or 160 in the swapped kernel, whose
// consumers then hold 160 accumulator registers a thread); a 64-row tile has
// one consumer. PINGPONG: each consumer
// takes whole 128-row tiles, alternating with the other, and holds all 128
// rows (two m64 accumulators).
//
// The decode tile (BLOCK_M = 8): one consumer, one m64 accumulator whose A
// descriptor has a stride-dimension byte offset of 0 (repeated_rows_desc),
// so each k16 step reads the stage's 8 rows of A as all eight 8-row groups:
// accumulator rows 8-63 repeat rows 0-7 and are never stored. A stage holds
// up to kDecodeStageKBlocks k-blocks; all of a stage's wgmmas, k-block by
// k-block in K order, make one group.
//
// One wgmma group is kept in flight: the group of stage s is committed, then
// the consumer waits until only it is pending, so the group of the stage
// before it has finished reading, and that stage is released.
//
// Numerics: each consumer issues its k16 steps in K order into one fp32
// accumulator and rounds once (cvt.rn) in the epilogue. Nothing about the
// order depends on M, N, the tile shape, the k-blocks a stage holds or the
// CTA that owns the tile: row r of the decode tile gets the k16 steps row r
// of a 64- or 128-row tile gets, in the same order.
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/ptx_wrappers.cuh"
#include "sm90/shared_storage.cuh"
#include "sm90/smem_desc.hpp"
#include "sm90/wgmma.cuh"

namespace tcgemm::sm90 {

template <typename Element, int BLOCK_N, Major A_MAJOR, Major B_MAJOR, bool PINGPONG, int BLOCK_M = kBlockM>
struct MainloopMma {
  // B's k-block: BLOCK_N columns, or whole 64-column panels (b_slot_cols),
  // of which the wgmma reads the first BLOCK_N.
  static constexpr int kBCols = b_slot_cols(BLOCK_N, BLOCK_M, B_MAJOR == Major::MN);
  using Stage = StageLayout<BLOCK_N, BLOCK_M, kBCols>;
  static_assert(kBlockK * sizeof(Element) == kSwizzleBytes, "a k-block is one 128-byte swizzle line");
  static_assert(!PINGPONG || BLOCK_N == 128, "ping-pong holds 2 x 64 accumulators per thread: 128-wide tiles");
  static constexpr int kMmaRows = mma_rows_for(BLOCK_M, PINGPONG);  // m64 accumulators per consumer
  static_assert(kMmaRows == 1 || BLOCK_N <= 160, "two m64 accumulators per thread: at most 160 wide (swapped)");
  static constexpr int kAccRegs = BLOCK_N / 2;       // per m64 accumulator and thread

  float acc[kMmaRows][kAccRegs];
  // The low words of the descriptors of stage 0's operands: this consumer's
  // first row block of A, and B. Every other descriptor of the ring is one of
  // these moved by a constant (desc_lo_moved): one add per wgmma operand.
  uint32_t a_lo;
  uint32_t b_lo;
  // B's lines: 128 bytes, or a narrower swizzle for an MN-major B narrower
  // than 64 columns (common/smem_layout.hpp). A's are always 128 bytes.
  static constexpr uint32_t kSwizzleB = detail::operand_swizzle_bytes(B_MAJOR, kBCols);
  static_assert(kSwizzleB != 0, "an MN-major B is built in whole 16-column panels");
  static constexpr bool kRepeatedRows = BLOCK_M == kDecodeBlockM;  // A: 8 rows read as 64
  static_assert(!kRepeatedRows || (A_MAJOR == Major::K && !PINGPONG), "the decode tile: A K-major, one m64");
  static constexpr uint64_t a_desc(uint32_t addr) {
    return kRepeatedRows ? repeated_rows_desc(addr) : operand_desc(A_MAJOR, addr, kBlockK);
  }
  static constexpr uint32_t kHiA = desc_hi(a_desc(0));
  static constexpr uint32_t kHiB = desc_hi(operand_desc(B_MAJOR, 0, kBlockK, kSwizzleB));
  static_assert(kSmemLimit <= detail::kDescAddressLimit, "desc_lo_moved is exact below 256 KiB");

  // `consumer`: 0 or 1. Its rows of A: its half of the tile (kMmaRows row
  // blocks), or (ping-pong) all of it from row 0.
  __device__ __forceinline__ MainloopMma(const uint8_t* ring, int consumer) {
    const uint32_t ring_addr = static_cast<uint32_t>(__cvta_generic_to_shared(ring));
    a_lo = desc_lo(a_desc(ring_addr + (PINGPONG ? 0 : consumer * kMmaRows * Stage::kRowBlockBytes)));
    b_lo = desc_lo(operand_desc(B_MAJOR, ring_addr + Stage::kABytes, kBlockK, kSwizzleB));
    // Held in registers from here on: computed again in the k-loop, they cost
    // a special-register read and a dependent chain on every k-block.
    detail::compute_here(a_lo);
    detail::compute_here(b_lo);
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r)
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) acc[r][i] = 0.0f;
  }

  // Issues the wgmmas of the tile's stage number `k_stage` (in ring stage
  // `stage`) as one group: its `count` k-blocks (1 to Stage::kKBlocks; fewer
  // only in a tile's last stage, where K ends) in K order, for the first
  // ROWS of this consumer's m64 accumulators (the tall tile leaves out those
  // whose rows all lie past M: live_rows). The first k16 step of a tile
  // overwrites the accumulators, later ones add to them.
  template <int ROWS = kMmaRows>
  __device__ __forceinline__ void issue(int stage, int k_stage, int count = 1) {
    static_assert(ROWS >= 1 && ROWS <= kMmaRows, "at least one of this consumer's accumulators");
    issue_at_most<Stage::kKBlocks, ROWS>(stage, k_stage, count);
  }

  // How many of this consumer's m64 accumulators hold rows of C, for a
  // consumer whose rows start at m0 where C has m rows: 0 to kMmaRows. An
  // accumulator wholly past M is never stored (the epilogue skips its
  // panels), so its wgmmas may be left out: in the tall tile at 129-192 rows
  // of C, a quarter of the tile's tensor work.
  __device__ __forceinline__ static int live_rows(int m0, int m) {
    const int rows = m - m0;
    return rows <= 0 ? 0 : rows >= 64 * kMmaRows ? kMmaRows : (rows + 63) / 64;
  }

  // Waits until at most PENDING groups are in flight (1: the group before the
  // last one has read its stage; 0: every group is done, the accumulators
  // hold the tile).
  template <int PENDING>
  __device__ __forceinline__ void wait() {
    wgmma_wait_group<PENDING>();
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
  }

 private:
  // The group of min(count, MAX) k-blocks: each count its own straight run of
  // wgmmas, chosen before the group starts (a branch inside a group made
  // ptxas fence the accumulators between the k-blocks).
  template <int MAX, int ROWS>
  __device__ __forceinline__ void issue_at_most(int stage, int k_stage, int count) {
    if constexpr (MAX == 1) {
      issue_k_blocks<1, ROWS>(stage, k_stage);
    } else {
      if (count >= MAX) issue_k_blocks<MAX, ROWS>(stage, k_stage);
      else issue_at_most<MAX - 1, ROWS>(stage, k_stage, count);
    }
  }

  // The group of a stage's first COUNT k-blocks into the first ROWS accumulators.
  template <int COUNT, int ROWS>
  __device__ __forceinline__ void issue_k_blocks(int stage, int k_stage) {
    const uint32_t stage_a = desc_lo_moved(a_lo, stage * Stage::kStageBytes);
    const uint32_t stage_b = desc_lo_moved(b_lo, stage * Stage::kStageBytes);
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
    wgmma_fence();
#pragma unroll
    for (int i = 0; i < COUNT; ++i) {
#pragma unroll
      for (int ks = 0; ks < kBlockK / 16; ++ks) {
        const uint64_t db = desc_from_words(
            kHiB, desc_lo_moved(stage_b, i * Stage::kBKBlockBytes + ks * k_step_bytes(B_MAJOR, kSwizzleB)));
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          const uint64_t da = desc_from_words(
              kHiA, desc_lo_moved(stage_a, i * Stage::kAKBlockBytes + r * Stage::kRowBlockBytes +
                                               ks * k_step_bytes(A_MAJOR)));
          wgmma_m64nNk16<Element, BLOCK_N, A_MAJOR == Major::MN, B_MAJOR == Major::MN>(
              acc[r], da, db, (k_stage > 0 || i > 0 || ks > 0) ? 1 : 0);
        }
      }
    }
    wgmma_commit_group();
  }
};

// Hands a stage back to the producers: one arrival per consumer warp on the
// stage's empty barrier in this CTA and, in a 2-CTA cluster, in the peer CTA
// too (the peer's producer multicasts its half of B, or of A, into this
// CTA's stage). CLUSTER_CTAS: 1 or 2.
// READERS: the consumer warpgroups that read each stage (2 when they split a
// 128-row tile; 1 with ping-pong, where one takes the whole tile, or with a
// 64- or 8-row tile).
template <int CLUSTER_CTAS, int READERS>
struct StageRelease {
  static_assert(CLUSTER_CTAS == 1 || CLUSTER_CTAS == 2, "the peer is the other CTA of a pair");
  // Arrivals that free a stage (smem_empty's count): every warp of the
  // consumers that read it, in every CTA of the cluster.
  static constexpr int kArrivals = READERS * 4 * CLUSTER_CTAS;

  uint32_t local_empty;      // this CTA's smem_empty[0], a shared::cta address (held: see MainloopMma)
  uint32_t peer_empty = 0;  // the peer CTA's smem_empty[0], a shared::cluster address

  __device__ __forceinline__ StageRelease(uint64_t* empty, uint32_t cta_rank)
      : local_empty(static_cast<uint32_t>(__cvta_generic_to_shared(empty))) {
    detail::compute_here(local_empty);
    if constexpr (CLUSTER_CTAS > 1) peer_empty = detail::map_to_cta(empty, cta_rank ^ 1);
  }
  __device__ __forceinline__ void operator()(int stage) const {
    detail::mbarrier_arrive_shared(local_empty + stage * sizeof(uint64_t));
    if constexpr (CLUSTER_CTAS > 1) detail::mbarrier_arrive_remote(peer_empty + stage * sizeof(uint64_t));
  }
};

}  // namespace tcgemm::sm90
