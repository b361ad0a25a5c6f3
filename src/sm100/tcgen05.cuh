// Thin wrappers for what the sm100 kernel needs beyond CCCL's cuda::ptx
// (CUDA 13.0), which covers tcgen05 (alloc, mma, commit, ld, fences) and
// Cluster Launch Control itself:
//   - the 2-SM TMA load (rank 2, or 3 for a batch) whose completion lands
//     on the leader CTA's barrier (cuda::ptx's cta_group_2 form takes this
//     CTA's barrier only), given as a shared::cluster address from mapa: the
//     peer-CTA barrier trick;
//   - the 128-bit shared load of a CLC response, decoded with cuda::ptx;
//   - 16-byte shared loads and stores of epilogue panel chunks.
#pragma once

#include <cstdint>

#include <cuda.h>
#include <cuda/ptx>

#include "sm100/sm100_config.hpp"

namespace tcgemm::sm100 {

// cp.async.bulk.tensor.2d with .cta_group::2 (PTX ISA 9.7.9.25.5.1): a box
// of `map` at (c0, c1) into this CTA's shared memory at dst; the byte count
// completes on the barrier at `bar_cluster_addr`, which may be in the peer
// CTA of the pair.
__device__ __forceinline__ void tma_load_2d_pair(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1,
                                                 uint32_t bar_cluster_addr) {
  asm volatile(
      "cp.async.bulk.tensor.2d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(bar_cluster_addr)
      : "memory");
}

// The same for a rank-3 map (a batched call's): the box at (c0, c1) of the
// batch's matrix `c2`.
__device__ __forceinline__ void tma_load_3d_pair(void* dst, const CUtensorMap* map, int32_t c0, int32_t c1, int32_t c2,
                                                 uint32_t bar_cluster_addr) {
  asm volatile(
      "cp.async.bulk.tensor.3d.cta_group::2.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar_cluster_addr)
      : "memory");
}

__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 r;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "r"(addr)
               : "memory");
  return r;
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t x, uint32_t y, uint32_t z, uint32_t w) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(x), "r"(y), "r"(z), "r"(w)
               : "memory");
}

// A Cluster Launch Control response (16 bytes the try_cancel wrote into
// shared memory), read with one 128-bit load and decoded by the
// query_cancel instructions. Only a canceled response carries a CTA id.
__device__ __forceinline__ ClcResponse read_clc_response(const uint4* slot) {
  const uint4 raw = ld_shared_v4(static_cast<uint32_t>(__cvta_generic_to_shared(slot)));
  ClcResponse r{};
  r.canceled = cuda::ptx::clusterlaunchcontrol_query_cancel_is_canceled(raw);
  r.first_cta_x = r.canceled ? cuda::ptx::clusterlaunchcontrol_query_cancel_get_first_ctaid_x<uint32_t>(raw) : 0u;
  return r;
}

}  // namespace tcgemm::sm100
