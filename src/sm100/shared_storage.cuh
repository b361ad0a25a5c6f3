// The sm100 kernel's shared memory: where each buffer and barrier lives, and
// the barriers' arrival counts. The byte budget itself (smem_bytes) is host
// arithmetic in sm100_config.hpp; this is the same layout seen from the kernel.
//
//   [ring: NUM_STAGES x (A: this CTA's BLOCK_M rows | B: this CTA's share)]  1 KiB aligned
//   [epilogue panels: epilogue warp x kEpiBuffers x (BLOCK_M / 4) x 64; none
//    where the epilogue stores from registers: stores_from_registers]
//   [smem_full[stage]][smem_empty[stage]][acc_full[b]][acc_empty[b]]
//   [c_loaded[epilogue warp][buffer]][clc_full[r]][clc_empty[r]]
//   [clc_response[r]: 16 bytes each][tmem base: written by tcgen05.alloc]
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/shared_memory.cuh"
#include "sm100/sm100_config.hpp"

namespace tcgemm::sm100 {

// One stage of the operand ring in one CTA: its BLOCK_M rows of A's k-block
// (128, or 64 for the 64-row single-CTA tiles), then its BLOCK_N / CTA_GROUP
// columns of B's (half of them in a pair, all alone).
template <int BLOCK_N, int CTA_GROUP = kCtaGroup, int BLOCK_M = kBlockM>
struct StageLayout {
  static constexpr int kABytes = BLOCK_M * kBlockK * 2;  // 16 KiB (8 KiB at 64 rows)
  static constexpr int kBCols = BLOCK_N / CTA_GROUP;     // this CTA's share of B
  static constexpr int kBBytes = kBCols * kBlockK * 2;
  static constexpr int kStageBytes = kABytes + kBBytes;
  // Every stage's A and B start on a 1024-byte swizzle pattern (the
  // descriptors' base offset is 0): whole 8-line groups of B, so BLOCK_N 8,
  // 40, 48 and 96 as well as the powers of two.
  static_assert(kABytes % detail::kPatternBytes == 0 && kBBytes % detail::kPatternBytes == 0,
                "stages of whole 1024-byte swizzle patterns");
};

// Readers of each CLC response that release it: per CTA the producer and the
// 4 epilogue warps, and the leader's MMA warp (Cluster Launch Control runs
// the pair tiles only).
inline constexpr int kClcReaders = kCtaGroup * (1 + kEpilogueWarps) + 1;

// A view of the dynamic shared memory: one pointer, the rest computed from
// it where it is used.
template <int BLOCK_N, int NUM_STAGES, int CTA_GROUP = kCtaGroup, int BLOCK_M = kBlockM, bool SWAP_AB = false>
struct SharedStorage {
  static_assert(is_tile_width(BLOCK_N, SWAP_AB), "BLOCK_N must be one of kSm100TileConfigs' widths");
  static_assert(smem_bytes(BLOCK_N, NUM_STAGES, CTA_GROUP, BLOCK_M, SWAP_AB) <= kSmemLimit,
                "the ring and panels must fit in 227 KiB");
  // One CTA an SM, whatever the grid: tcgen05.alloc blocks while the columns
  // it asks for are held by another CTA on the SM (PTX ISA 9.7.16.7.1), and a
  // 256-wide tile holds all 512. A second CTA there (of this grid, or of the
  // next one under programmatic dependent launch, which starts while this
  // one runs) could then wait on this one's columns, and with the pairs'
  // collective alloc the wait can close a cycle. Over half the SM's shared
  // memory keeps any second CTA off (__launch_bounds__' 1 is a minimum, not a
  // maximum); every ring is sized to fill the limit (stages_for).
  static_assert(2 * (smem_bytes(BLOCK_N, NUM_STAGES, CTA_GROUP, BLOCK_M, SWAP_AB) + 1024) > kSmemPerSm,
                "a CTA must take over half of the SM's shared memory (with the 1 KiB reserved for each)");
  // The epilogue panels' bytes: none where the epilogue stores from registers (stores_from_registers).
  static constexpr int kPanelAreaBytes = panel_area_bytes(BLOCK_N, BLOCK_M, SWAP_AB);
  static constexpr int kStageBytes = StageLayout<BLOCK_N, CTA_GROUP, BLOCK_M>::kStageBytes;

  uint8_t* ring;  // stage s at ring + s * kStageBytes

  __device__ __forceinline__ static SharedStorage at(uint8_t* smem_raw) {
    return SharedStorage{detail::aligned_dynamic_smem(smem_raw)};
  }
  __device__ __forceinline__ uint8_t* stage(int s) const { return ring + s * kStageBytes; }
  __device__ __forceinline__ uint8_t* panels() const { return ring + NUM_STAGES * kStageBytes; }
  __device__ __forceinline__ uint64_t* smem_full() const { return reinterpret_cast<uint64_t*>(panels() + kPanelAreaBytes); }
  __device__ __forceinline__ uint64_t* smem_empty() const { return smem_full() + NUM_STAGES; }
  __device__ __forceinline__ uint64_t* acc_full() const { return smem_empty() + NUM_STAGES; }
  __device__ __forceinline__ uint64_t* acc_empty() const { return acc_full() + kAccBuffers; }
  __device__ __forceinline__ uint64_t* c_loaded() const { return acc_empty() + kAccBuffers; }  // [warp][buffer]
  __device__ __forceinline__ uint64_t* clc_full() const { return c_loaded() + kEpilogueWarps * kEpiBuffers; }
  __device__ __forceinline__ uint64_t* clc_empty() const { return clc_full() + kClcSlots; }
  __device__ __forceinline__ uint4* clc_response() const {  // 16-byte aligned
    return reinterpret_cast<uint4*>(clc_empty() + kClcSlots);
  }
  __device__ __forceinline__ uint32_t* tmem_base_slot() const {
    return reinterpret_cast<uint32_t*>(clc_response() + kClcSlots);
  }

  // One thread of each CTA initializes its barriers; `full_count` is the
  // arrival count of smem_full (1: the leader producer's expect_tx, which
  // covers both CTAs' bytes in a pair).
  __device__ __forceinline__ void init_barriers(uint32_t full_count) const {
    for (int s = 0; s < NUM_STAGES; ++s) {
      cuda::ptx::mbarrier_init(&smem_full()[s], full_count);
      cuda::ptx::mbarrier_init(&smem_empty()[s], 1);  // one tcgen05.commit
    }
    for (int b = 0; b < kAccBuffers; ++b) {
      cuda::ptx::mbarrier_init(&acc_full()[b], 1);                           // one tcgen05.commit
      cuda::ptx::mbarrier_init(&acc_empty()[b], CTA_GROUP * kEpilogueWarps);  // every epilogue warp of the group
    }
    for (int i = 0; i < kEpilogueWarps * kEpiBuffers; ++i) cuda::ptx::mbarrier_init(&c_loaded()[i], 1);
    for (int r = 0; r < kClcSlots; ++r) {
      cuda::ptx::mbarrier_init(&clc_full()[r], 1);  // the scheduler's expect_tx (+ 16 response bytes)
      cuda::ptx::mbarrier_init(&clc_empty()[r], kClcReaders);
    }
    // Visible to the async proxy and to the peer CTA (its TMA completions,
    // commits and arrivals land here).
    cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
};

}  // namespace tcgemm::sm100
