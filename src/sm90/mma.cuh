// A consumer warpgroup's tensor-core work in the sm90 kernel: wgmma m64nNk16
// from the ring's stages into fp32 accumulators in registers, and the
// hand-back of each stage to the producers once its wgmmas have read it.
//
// Cooperative: the two consumers split each 128-row tile, 64 rows each (one
// m64 accumulator); a 64-row tile has one consumer. PINGPONG: each consumer
// takes whole 128-row tiles, alternating with the other, and holds all 128
// rows (two m64 accumulators).
//
// One wgmma group is kept in flight: the group of stage s is committed, then
// the consumer waits until only it is pending, so the group of the stage
// before it has finished reading, and that stage is released.
//
// Numerics: each consumer issues its k16 steps in K order into one fp32
// accumulator and rounds once (cvt.rn) in the epilogue. Nothing about the
// order depends on M, N, the tile shape or the CTA that owns the tile.
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
  using Stage = StageLayout<BLOCK_N, BLOCK_M>;
  static_assert(kBlockK * sizeof(Element) == kSwizzleBytes, "a k-block is one 128-byte swizzle line");
  static_assert(!PINGPONG || BLOCK_N == 128, "ping-pong holds 2 x 64 accumulators per thread: 128-wide tiles");
  static constexpr int kMmaRows = PINGPONG ? 2 : 1;  // m64 accumulators per consumer
  static constexpr int kAccRegs = BLOCK_N / 2;       // per m64 accumulator and thread

  float acc[kMmaRows][kAccRegs];
  uint32_t ring_addr;  // shared address of the ring
  uint32_t a_offset;   // this consumer's first row block of A in a stage

  // `consumer`: 0 or 1. Its rows of A: its half of the tile, or (ping-pong) row 0.
  __device__ __forceinline__ MainloopMma(const uint8_t* ring, int consumer)
      : ring_addr(static_cast<uint32_t>(__cvta_generic_to_shared(ring))),
        a_offset(PINGPONG ? 0 : consumer * Stage::kRowBlockBytes) {
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r)
#pragma unroll
      for (int i = 0; i < kAccRegs; ++i) acc[r][i] = 0.0f;
  }

  // Issues the wgmmas of k-block kb (in `stage`) as one group: the first
  // k-block of a tile overwrites the accumulators, later ones add to them.
  __device__ __forceinline__ void issue(int stage, int kb) {
    const uint32_t a_base = ring_addr + stage * Stage::kStageBytes + a_offset;
    const uint32_t b_base = ring_addr + stage * Stage::kStageBytes + Stage::kABytes;
#pragma unroll
    for (int r = 0; r < kMmaRows; ++r) fence_accumulators(acc[r]);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBlockK / 16; ++ks) {
      const uint64_t db = operand_desc(B_MAJOR, b_base + ks * k_step_bytes(B_MAJOR), kBlockK);
#pragma unroll
      for (int r = 0; r < kMmaRows; ++r) {
        const uint64_t da =
            operand_desc(A_MAJOR, a_base + r * Stage::kRowBlockBytes + ks * k_step_bytes(A_MAJOR), kBlockK);
        wgmma_m64nNk16<Element, BLOCK_N, A_MAJOR == Major::MN, B_MAJOR == Major::MN>(acc[r], da, db,
                                                                                    (kb > 0 || ks > 0) ? 1 : 0);
      }
    }
    wgmma_commit_group();
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
};

// Hands a stage back to the producers: one arrival per consumer warp on the
// stage's empty barrier in this CTA and, in a cluster, in the peer CTA too
// (the peer's producer multicasts its half of B into this CTA's stage).
// READERS: the consumer warpgroups that read each stage (2 when they split a
// 128-row tile; 1 with ping-pong, where one takes the whole tile, or with a
// 64-row tile).
template <int CLUSTER_M, int READERS>
struct StageRelease {
  // Arrivals that free a stage (smem_empty's count): every warp of the
  // consumers that read it, in every CTA of the cluster.
  static constexpr int kArrivals = READERS * 4 * CLUSTER_M;

  uint64_t* smem_empty;
  uint32_t peer_empty = 0;  // the peer CTA's smem_empty[0], a shared::cluster address

  __device__ __forceinline__ StageRelease(uint64_t* empty, uint32_t cta_rank) : smem_empty(empty) {
    if constexpr (CLUSTER_M > 1) peer_empty = detail::map_to_cta(smem_empty, cta_rank ^ 1);
  }
  __device__ __forceinline__ void operator()(int stage) const {
    cuda::ptx::mbarrier_arrive(&smem_empty[stage]);
    if constexpr (CLUSTER_M > 1) detail::mbarrier_arrive_remote(peer_empty + stage * sizeof(uint64_t));
  }
};

}  // namespace tcgemm::sm90
