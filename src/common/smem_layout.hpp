// Shared-memory operand layout common to wgmma (sm_90) and tcgen05 (sm_100):
// tiles written by TMA with 128-byte swizzle, and where each element lands.
// The two architectures encode the matrix descriptor differently
// (sm90/smem_desc.hpp, sm100/umma_desc.hpp) but describe the same bytes
// with the same offsets, computed here.
//
// A 128B-swizzled tile is a stack of 128-byte rows ("lines"); 8 lines form the
// 1024-byte swizzle pattern, and 64 fp16 of the contiguous dimension form one
// "panel" (a line is one row of a panel).
//
// K-major operand (K contiguous; A op N, B op T): one panel holds the whole
// BLOCK_K = 64. SBO = 1024 (next 8 rows of M/N); LBO is unused with swizzling
// (set to 16 bytes by convention). Each k16 step moves the start 32 bytes
// along the line.
//
// MN-major operand (M or N contiguous; A op T, B op N): panels of 64 M/N
// elements each span all BLOCK_K lines. LBO = distance between panels
// (BLOCK_K * 128 bytes), SBO = 1024 (next 8 lines of K). Each k16 step moves
// the start 16 lines = 2048 bytes. The instruction's transpose (major) flag
// is set. A tile narrower than 64 (or not a multiple of 64: the small-M
// tiles) uses narrower panels with a narrower swizzle, the same formulas
// with the swizzle's line length S in place of 128: panels of 32 elements
// (S = 64 bytes) or 16 (S = 32), LBO = BLOCK_K * S, SBO = 8 * S, a k16 step
// 16 * S bytes (mn_panel_cols).
#pragma once

#include <cstdint>

#include "common/tile_order.hpp"  // TCGEMM_HD

namespace tcgemm::detail {

enum class Major : int { K = 0, MN = 1 };

inline constexpr uint32_t kSwizzleBytes = 128;
inline constexpr uint32_t kPatternBytes = 8 * kSwizzleBytes;  // 8 lines

// The panel width, in elements, of an MN-major operand tile `cols` wide
// (cols of M or N): 64 (128-byte swizzle) where 64 divides it, else 32
// (64-byte swizzle) or 16 (32-byte); 0 where 16 does not divide it (not
// built MN-major). Its swizzle is one panel line: 2 * panel bytes.
TCGEMM_HD constexpr uint32_t mn_panel_cols(int cols) {
  return cols % 64 == 0 ? 64 : cols % 32 == 0 ? 32 : cols % 16 == 0 ? 16 : 0;
}
// The swizzle (line length, bytes) of an operand tile `cols` wide: 128 for
// K-major (one 64-element k-block per line), the panel's for MN-major.
TCGEMM_HD constexpr uint32_t operand_swizzle_bytes(Major major, int cols) {
  return major == Major::K ? kSwizzleBytes : 2 * mn_panel_cols(cols);
}

// Leading- and stride-dimension byte offsets of an operand tile of
// `block_k` lines (MN-major) with `swizzle`-byte lines, starting at an
// address aligned to its 8-line pattern.
TCGEMM_HD constexpr uint32_t operand_lbo(Major major, uint32_t block_k, uint32_t swizzle = kSwizzleBytes) {
  return major == Major::K ? 16 : block_k * swizzle;
}
TCGEMM_HD constexpr uint32_t operand_sbo(Major, uint32_t swizzle = kSwizzleBytes) { return 8 * swizzle; }

// Moving a matrix descriptor (either architecture's: both keep the start
// address >> 4 in bits 0-13 and LBO in bits 16-29 of the low word, and only
// constants in the high word) `byte_offset` bytes further: the low word plus
// byte_offset >> 4, the high word as it was. So a k-loop moves a descriptor
// with one 32-bit add of a constant. Exact while the moved address stays below
// 256 KiB (shared memory ends at 227 KiB), so the add cannot carry out of the
// address field (tests/host/test_smem_desc.cpp checks every offset of the window).
TCGEMM_HD constexpr uint32_t desc_lo(uint64_t desc) { return static_cast<uint32_t>(desc); }
TCGEMM_HD constexpr uint32_t desc_hi(uint64_t desc) { return static_cast<uint32_t>(desc >> 32); }
TCGEMM_HD constexpr uint64_t desc_from_words(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }
TCGEMM_HD constexpr uint32_t desc_lo_moved(uint32_t lo, uint32_t byte_offset) { return lo + (byte_offset >> 4); }
inline constexpr int kDescAddressLimit = 1 << 18;  // bytes: where desc_lo_moved stops being exact

// Bytes the start address moves per k16 step.
TCGEMM_HD constexpr uint32_t k_step_bytes(Major major, uint32_t swizzle = kSwizzleBytes) {
  return major == Major::K ? 16 * 2 : 16 * swizzle;
}

// The deepest operand ring that fits: the largest stage count s >= 1 with
// bytes(s) <= limit (bytes: total shared memory of a kernel with s stages).
template <typename Bytes>
constexpr int deepest_ring(Bytes bytes, int limit) {
  int s = 1;
  while (bytes(s + 1) <= limit) ++s;
  return s;
}

// Byte offset of element (row, col) inside a 128B-swizzled tile whose lines
// are `row`s of 64 elements (one panel): where TMA puts it and where an
// epilogue must write it. Chunk (16 bytes) index XOR line % 8.
TCGEMM_HD constexpr uint32_t swizzled_offset(uint32_t row, uint32_t col) {
  const uint32_t chunk = (col * 2) / 16;
  return row * kSwizzleBytes + ((chunk ^ (row % 8)) * 16) + (col * 2) % 16;
}

// swizzled_offset(row, col + 16 j) from swizzled_offset(row, col), for col <
// 16 and j < 4: the 16-column step adds 2 j to the chunk index, bits the
// chunk's own bit 0 does not touch, so it commutes with the XOR by the line:
// one XOR of 32 j. Also exact on a shared address `base + offset` when base
// is a multiple of 128 (the epilogue's panels are 1 KiB aligned).
TCGEMM_HD constexpr uint32_t swizzled_step16(uint32_t offset, uint32_t j) { return offset ^ (j * 32); }

// A pair of 64-column output panels side by side, 64 x 128 elements, as one
// TMA box of a map that cuts C's rows into 64-column blocks ({64 columns,
// blocks, rows}: sm90's paired stores, sm90/epilogue.cuh): each row is two
// 128-byte lines, the left panel's then the right one's, 256 bytes apart,
// and the 128-byte swizzle follows the address as TMA applies it: the 16-byte
// chunk index XOR bits 7-9 of the offset, (2 row + half) % 8. Element (row,
// col), col < 128.
TCGEMM_HD constexpr uint32_t paired_swizzled_offset(uint32_t row, uint32_t col) {
  const uint32_t half = col / 64, chunk = (col % 64 * 2) / 16;
  return row * 2 * kSwizzleBytes + half * kSwizzleBytes + ((chunk ^ ((2 * row + half) % 8)) * 16) + (col * 2) % 16;
}

// paired_swizzled_offset(row, col + 64) from paired_swizzled_offset(row,
// col), col < 64: the right line (+128, bit 7, which the left line's offset
// never sets) and the swizzle phase one higher ((2 row) % 8 is even, so +1
// flips its bit 0, and the chunk's).
inline constexpr uint32_t kPairedRightHalf = kSwizzleBytes | 16;

}  // namespace tcgemm::detail
