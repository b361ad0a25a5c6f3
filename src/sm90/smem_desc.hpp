// wgmma shared-memory matrix descriptors (PTX ISA 9.7.15.5.1.2, "Matrix
// Descriptor Format") for the tiles of common/smem_layout.hpp.
//
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 49-51  base offset (0: every tile here is 1024-byte aligned)
//   bits 62-63  swizzle mode (1 = 128-byte, 2 = 64-byte, 3 = 32-byte)
#pragma once

#include <cstdint>

#include "common/smem_layout.hpp"

namespace tcgemm::sm90 {

using detail::desc_from_words;
using detail::desc_hi;
using detail::desc_lo;
using detail::desc_lo_moved;
using detail::k_step_bytes;
using detail::kPatternBytes;
using detail::kSwizzleBytes;
using detail::Major;
using detail::swizzled_offset;

// The descriptor's swizzle mode for `swizzle`-byte lines (128, 64 or 32).
TCGEMM_HD constexpr uint64_t swizzle_mode(uint32_t swizzle) { return swizzle == 128 ? 1 : swizzle == 64 ? 2 : 3; }

TCGEMM_HD constexpr uint64_t make_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes,
                                            uint32_t swizzle = kSwizzleBytes) {
  return (static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4)) |
         (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (swizzle_mode(swizzle) << 62);
}

// Descriptor of an operand tile of `block_k` lines (MN-major) or any number
// of 8-line groups (K-major) starting at smem_addr, with `swizzle`-byte lines
// (operand_swizzle_bytes).
TCGEMM_HD constexpr uint64_t operand_desc(Major major, uint32_t smem_addr, uint32_t block_k,
                                          uint32_t swizzle = kSwizzleBytes) {
  return make_smem_desc(smem_addr, detail::operand_lbo(major, block_k, swizzle), detail::operand_sbo(major, swizzle),
                        swizzle);
}

// Descriptor of the decode tile's A k-block (sm90/mma.cuh): one K-major
// 8-row group (1 KiB, 128-byte swizzle) read as all eight 8-row groups of a
// wgmma m64, by a stride-dimension byte offset (SBO, the step from one 8-row
// group to the next along M) of 0. The matrix-descriptor format has no lower
// bound on SBO (14 bits of byte offset >> 4; 0 is 16-byte aligned), and the
// 128-byte swizzle of each group is taken from the address bits of the
// pattern it reads, which all eight share. Rows 8-63 of the accumulator are
// rows 0-7 again.
TCGEMM_HD constexpr uint64_t repeated_rows_desc(uint32_t smem_addr) {
  return make_smem_desc(smem_addr, detail::operand_lbo(Major::K, 0), /*sbo_bytes=*/0);
}

}  // namespace tcgemm::sm90
