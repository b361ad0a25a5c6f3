// wgmma shared-memory matrix descriptors (PTX ISA 9.7.15.5.1.2, "Matrix
// Descriptor Format") for tiles written by TMA with 128-byte swizzle.
//
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 49-51  base offset (0: every tile here is 1024-byte aligned)
//   bits 62-63  swizzle mode (1 = 128-byte)
//
// A 128B-swizzled tile is a stack of 128-byte rows ("lines"); 8 lines form the
// 1024-byte swizzle pattern, and 64 fp16 of the contiguous dimension form one
// "panel" (a line is one row of a panel).
//
// K-major operand (K contiguous; A op N, B op T): one panel holds the whole
// BLOCK_K = 64. SBO = 1024 (next 8 rows of M/N); LBO is unused with swizzling
// (set to 1 by convention). Each k16 step moves the start 32 bytes along the line.
//
// MN-major operand (M or N contiguous; A op T, B op N): panels of 64 M/N
// elements each span all BLOCK_K lines. LBO = distance between panels
// (BLOCK_K * 128 bytes), SBO = 1024 (next 8 lines of K). Each k16 step moves
// the start 16 lines = 2048 bytes. The instruction's transpose flag is set.
#pragma once

#include <cstdint>

#include "sm90/tile_scheduler.hpp"  // TCGEMM_HD

namespace tcgemm::sm90 {

enum class Major : int { K = 0, MN = 1 };

inline constexpr uint32_t kSwizzleBytes = 128;
inline constexpr uint32_t kPatternBytes = 8 * kSwizzleBytes;  // 8 lines

TCGEMM_HD constexpr uint64_t make_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return (static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4)) |
         (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) |
         (uint64_t{1} << 62);
}

// Descriptor of an operand tile of `block_k` lines (MN-major) or `rows`
// lines (K-major) starting at smem_addr.
TCGEMM_HD constexpr uint64_t operand_desc(Major major, uint32_t smem_addr, uint32_t block_k) {
  return major == Major::K ? make_smem_desc(smem_addr, 16, kPatternBytes)
                           : make_smem_desc(smem_addr, block_k * kSwizzleBytes, kPatternBytes);
}

// Bytes the start address moves per k16 step.
TCGEMM_HD constexpr uint32_t k_step_bytes(Major major) {
  return major == Major::K ? 16 * 2 : 16 * kSwizzleBytes;
}

// Byte offset of element (row, col) inside a 128B-swizzled tile whose lines
// are `row`s of 64 elements (one panel): where TMA puts it and where the
// epilogue's stmatrix must write it. Chunk (16 bytes) index XOR line % 8.
TCGEMM_HD constexpr uint32_t swizzled_offset(uint32_t row, uint32_t col) {
  const uint32_t chunk = (col * 2) / 16;
  return row * kSwizzleBytes + ((chunk ^ (row % 8)) * 16) + (col * 2) % 16;
}

}  // namespace tcgemm::sm90
