// The sm90 kernel's shared memory: where each buffer and barrier lives, and
// the barriers' arrival counts. The byte budget itself (smem_bytes) is host
// arithmetic in sm90_config.hpp; this is the same layout seen from the kernel.
//
//   [ring: NUM_STAGES x (A k-block(s) | B k-block(s))]  1 KiB aligned (128B swizzle)
//   [epilogue panels: consumer x epi_buffers x 64x64][bias: consumer x 64 fp32]   (BLOCK_M = 128, 256)
//   [smem_full[stage]][smem_empty[stage]][c_loaded[consumer][buffer]][math_turn[consumer]]
//   [stage_tile[stage]][done flag]   (counted tiles)
#pragma once

#include <cstdint>

#include <cuda/ptx>

#include "common/device/shared_memory.cuh"
#include "sm90/sm90_config.hpp"

namespace tcgemm::sm90 {

// One stage of the operand ring: A's BLOCK_M x 64 k-block, then B's BLOCK_N
// x 64. The decode tile (BLOCK_M = 8): kKBlocks k-blocks of each, in K order,
// A's (1 KiB each: one 8-row swizzle pattern) then B's.
//
//   [A kb 0][A kb 1]..[A kb KB-1][B kb 0][B kb 1]..[B kb KB-1]
// B_COLS: the columns B's k-block takes (BLOCK_N, or whole 64-column panels
// for an MN-major B: b_slot_cols).
template <int BLOCK_N, int BLOCK_M = kBlockM, int B_COLS = BLOCK_N>
struct StageLayout {
  static constexpr int kKBlocks = stage_k_blocks(BLOCK_M);
  static constexpr int kAKBlockBytes = BLOCK_M * kBlockK * 2;  // 1, 8, 16 or 32 KiB
  static constexpr int kBKBlockBytes = B_COLS * kBlockK * 2;   // 1 to 32 KiB
  static constexpr int kABytes = kKBlocks * kAKBlockBytes;
  static constexpr int kBBytes = kKBlocks * kBKBlockBytes;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static_assert(kStageBytes == stage_bytes(BLOCK_N, BLOCK_M, B_COLS),
                "the host's budget and the kernel's layout agree");
  static_assert(kAKBlockBytes % 1024 == 0 && kBKBlockBytes % 1024 == 0,
                "every k-block starts on a 1 KiB swizzle pattern (BLOCK_N a multiple of 8)");
  // A's m64 row blocks sit 8 KiB apart in a stage of the 128- and 256-row
  // tiles (64 rows of a K-major k-block, or one 64-wide panel of an M-major
  // one).
  static constexpr uint32_t kRowBlockBytes = 64 * kBlockK * 2;
};

inline constexpr int kPanelBytes = kEpiPanel * kEpiPanel * 2;  // 8 KiB: one 64x64 output panel
static_assert(epilogue_bytes(kBlockM) == kNumConsumers * (kEpiBuffers * kPanelBytes + kBiasStageBytes),
              "the epilogue's bytes: every consumer's panel buffers, then every consumer's staged bias");

// A view of the dynamic shared memory: one pointer, the rest computed from
// it where it is used (as the compiler would rematerialize them anyway).
template <int BLOCK_N, int NUM_STAGES, int BLOCK_M = kBlockM, int B_COLS = BLOCK_N>
struct SharedStorage {
  static_assert(is_tile_width(BLOCK_N), "BLOCK_N must be one of kTileWidths");
  static_assert(smem_bytes(BLOCK_N, NUM_STAGES, BLOCK_M, B_COLS) <= kSmemLimit,
                "the ring and panels must fit in 227 KiB");
  static constexpr int kStageBytes = StageLayout<BLOCK_N, BLOCK_M, B_COLS>::kStageBytes;

  uint8_t* ring;  // stage s at ring + s * kStageBytes

  __device__ __forceinline__ static SharedStorage at(uint8_t* smem_raw) {
    return SharedStorage{detail::aligned_dynamic_smem(smem_raw)};
  }
  __device__ __forceinline__ uint8_t* stage(int s) const { return ring + s * kStageBytes; }
  __device__ __forceinline__ uint8_t* panels() const { return ring + NUM_STAGES * kStageBytes; }  // [consumer][buffer]
  __device__ __forceinline__ float* bias_stage() const {  // [consumer][64]; 128- and 256-row tiles only
    if constexpr (stores_from_registers(BLOCK_M)) return nullptr;
    else return reinterpret_cast<float*>(panels() + kNumConsumers * epi_buffers(BLOCK_M, BLOCK_N) * kPanelBytes);
  }
  __device__ __forceinline__ uint64_t* smem_full() const {
    return reinterpret_cast<uint64_t*>(panels() + epilogue_bytes(BLOCK_M, BLOCK_N));
  }
  __device__ __forceinline__ uint64_t* smem_empty() const { return smem_full() + NUM_STAGES; }
  __device__ __forceinline__ uint64_t* c_loaded() const { return smem_empty() + NUM_STAGES; }  // [consumer][buffer]
  __device__ __forceinline__ uint64_t* math_turn() const { return c_loaded() + kNumConsumers * kEpiBuffers; }
  // Counted tiles: [stage] the tile index a stage's fill starts, then the
  // ping-pong done flag (sm90/tile_counter.cuh).
  __device__ __forceinline__ int* stage_tile() const { return reinterpret_cast<int*>(math_turn() + kNumConsumers); }

  // One thread initializes every barrier. smem_full: the producer's arrive
  // (with the TMA bytes), `full_count` of them; smem_empty: one arrival per
  // consumer warp, of every CTA of the cluster, that reads the stage.
  __device__ __forceinline__ void init_barriers(uint32_t full_count, uint32_t stage_readers, bool cluster) const {
    for (int s = 0; s < NUM_STAGES; ++s) {
      cuda::ptx::mbarrier_init(&smem_full()[s], full_count);
      cuda::ptx::mbarrier_init(&smem_empty()[s], stage_readers);
    }
    for (int i = 0; i < kNumConsumers * kEpiBuffers; ++i) cuda::ptx::mbarrier_init(&c_loaded()[i], 1);
    for (int i = 0; i < kNumConsumers; ++i) cuda::ptx::mbarrier_init(&math_turn()[i], 1);
    stage_tile()[NUM_STAGES] = 0;  // the done flag (counted tiles: one CTA, so __syncthreads orders it)
    // Make the initialized barriers visible to the async (TMA) proxy and,
    // in a cluster, to the peer CTA (its multicasts and arrivals land here).
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    if (cluster) cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  }
};

}  // namespace tcgemm::sm90
