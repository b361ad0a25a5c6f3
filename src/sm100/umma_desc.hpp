// tcgen05.mma descriptors (PTX ISA 9.7.16.4, "Matrix and Data Movement
// Shape", and 9.7.16.5.1, "Instruction descriptor"), for the operand tiles of
// common/smem_layout.hpp. Pure arithmetic, unit-tested on the host.
//
// Shared-memory matrix descriptor (sm_100 form; it describes the same bytes
// as the wgmma descriptor of sm90/smem_desc.hpp, and differs from it only in
// the version bit 46 and in the swizzle field's width):
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 46-48  fixed 0b001 (descriptor version on sm_100)
//   bits 49-51  base offset (0: every tile here is 1024-byte aligned)
//   bit  52     LBO mode (0: relative byte offset)
//   bits 61-63  swizzle mode (2 = 128-byte; sm_90's 2-bit field at 62-63
//               held 1 for the same swizzle: the same bit)
//
// Instruction descriptor, .kind::f16 (32 bits):
//   bits  4-5   D format (1 = f32)
//   bits  7-9   A format (0 = f16, 1 = bf16)
//   bits 10-12  B format (same encoding)
//   bit  15     A major (0 = K-major, 1 = MN-major)
//   bit  16     B major
//   bits 17-22  N >> 3
//   bits 24-28  M >> 4
//   (sparsity, saturation, negation and shift bits stay 0)
#pragma once

#include <cstdint>

#include "common/smem_layout.hpp"

namespace tcgemm::sm100 {

using detail::Major;

TCGEMM_HD constexpr uint64_t make_smem_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  return (static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4)) |
         (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (uint64_t{1} << 46) | (uint64_t{2} << 61);
}

// Descriptor of an operand tile of `block_k` lines (MN-major) or any number
// of 8-line groups (K-major) starting at smem_addr.
TCGEMM_HD constexpr uint64_t operand_desc(Major major, uint32_t smem_addr, uint32_t block_k) {
  return make_smem_desc(smem_addr, detail::operand_lbo(major, block_k), detail::operand_sbo(major));
}

// .kind::f16 instruction descriptor: fp32 accumulate, A and B both fp16
// (bf16 = false) or both bf16, an M x N MMA (M = 256 for cta_group::2).
TCGEMM_HD constexpr uint32_t instr_desc_f16(bool bf16, Major a_major, Major b_major, int m, int n) {
  const uint32_t ab = bf16 ? 1u : 0u;
  return (1u << 4) | (ab << 7) | (ab << 10) | (static_cast<uint32_t>(a_major) << 15) |
         (static_cast<uint32_t>(b_major) << 16) | ((static_cast<uint32_t>(n) >> 3) << 17) |
         ((static_cast<uint32_t>(m) >> 4) << 24);
}

// Whether an M x N .kind::f16 MMA shape is valid with cta_group::2 (M = 256:
// N a multiple of 16 in [16, 256]); the kernel's tile widths are checked
// against it at compile time.
TCGEMM_HD constexpr bool valid_2sm_mma_shape(int m, int n) { return m == 256 && n % 16 == 0 && n >= 16 && n <= 256; }
// The same for cta_group::1: at M = 128 (one lane of tensor memory per row)
// N a multiple of 16 in [16, 256]; at M = 64 (16 rows in each warp's quarter
// of the lanes: tmem_lane) a multiple of 8 in [8, 256].
TCGEMM_HD constexpr bool valid_1sm_mma_shape(int m, int n) {
  return (m == 128 && n % 16 == 0 && n >= 16 && n <= 256) || (m == 64 && n % 8 == 0 && n >= 8 && n <= 256);
}

// Tensor-memory address: lane (row) in bits 31-16, column in bits 15-0.
TCGEMM_HD constexpr uint32_t tmem_addr(uint32_t base, uint32_t lane, uint32_t column) {
  return base + (lane << 16) + column;
}

}  // namespace tcgemm::sm100
