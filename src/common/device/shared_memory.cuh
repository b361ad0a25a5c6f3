// The kernels' dynamic shared memory: where their layouts start.
#pragma once

#include <cstdint>

namespace tcgemm::detail {

// The first 1 KiB boundary at or after the dynamic shared memory's base:
// 128-byte-swizzled TMA boxes and MMA operand tiles need 1024-byte aligned
// addresses, and the base the runtime hands out is not always aligned so
// (each layout's byte budget counts the 1 KiB this may skip).
__device__ __forceinline__ uint8_t* aligned_dynamic_smem(uint8_t* smem_raw) {
  const uint32_t raw_addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  return smem_raw + ((1024 - (raw_addr % 1024)) % 1024);
}

}  // namespace tcgemm::detail
