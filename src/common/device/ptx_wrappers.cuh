// Thin wrappers for instructions every kernel family needs and CCCL's
// cuda::ptx (CUDA 13.0) does not provide in the form used here: elect.sync
// (PTX ISA 9.7.13.11), prefetch.tensormap (9.7.9.15), mapa (9.7.9.19) with a
// remote mbarrier arrivals on shared::cluster addresses, named barriers
// (bar.sync), mbarrier waits and arrivals on 32-bit shared addresses, and
// ex2.approx and rcp.approx (the floating-point instructions: the fused
// epilogue's gelu and silu), and the TMA store with an L2 cache policy
// (createpolicy, 9.7.9.18; cp.async.bulk.tensor's .L2::cache_hint, 9.7.9.25.5.1:
// cuda::ptx's store takes no policy).
// One function per instruction; nothing here decides anything.
#pragma once

#include <cstdint>

namespace tcgemm::detail {

// elect.sync: true in exactly one active lane of the warp.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred = 0;
  asm volatile(
      "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

// prefetch.tensormap: starts fetching a TMA descriptor (a __grid_constant__
// kernel parameter) so the first copy that uses it does not wait for it.
__device__ __forceinline__ void prefetch_tensormap(const void* tmap) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}
// The same for several descriptors, in order.
template <typename... Maps>
__device__ __forceinline__ void prefetch_tensormaps(const Maps*... tmaps) {
  (prefetch_tensormap(tmaps), ...);
}

// Makes the compiler compute `value` at this point of the program: an empty
// volatile asm statement that reads it and (as far as the compiler knows)
// rewrites it, so it stays in order with the other volatile asm (barrier
// waits, wgmma) and later uses cannot recompute it. Without it the compiler
// sinks a computation to its first use, which can move work that should hide
// under a wait (a tile's coordinates, while the ring fills) onto a critical
// path (after the mainloop, before the epilogue's first store).
__device__ __forceinline__ void compute_here(int& value) { asm volatile("" : "+r"(value)); }
__device__ __forceinline__ void compute_here(uint32_t& value) { asm volatile("" : "+r"(value)); }

// `value` (the same in every lane of the warp: a warp's or warpgroup's
// index) as lane 0's, which tells the compiler it is warp-uniform. A role
// branch on threadIdx.x / 128 is divergent as far as the compiler knows, and
// everything computed under it lives in per-thread registers: a k-loop's
// wgmma descriptors were then built in vector registers and copied to
// uniform ones (R2UR) before every wgmma. Branching on the broadcast value
// instead keeps the ring index and the descriptors in the uniform datapath.
__device__ __forceinline__ int warp_uniform(int value) { return __shfl_sync(0xffffffffu, value, 0); }

// mbarrier.try_wait.parity and mbarrier.arrive (.release.cta, the defaults)
// on a barrier named by its 32-bit shared::cta address. cuda::ptx takes
// generic pointers and converts each to a shared address where it is used;
// in a k-loop the compiler recomputed that conversion, a special-register
// read and five dependent instructions, on every k-block. A consumer that
// holds its barriers' shared addresses in registers waits with these.
__device__ __forceinline__ bool mbarrier_try_wait_parity_shared(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
__device__ __forceinline__ void mbarrier_arrive_shared(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// ex2.approx.ftz.f32: 2^x in one instruction, within 2 ulp; subnormal
// results flush to zero. (exp2f is the same instruction plus a scaling for
// subnormal results, which the fused epilogue's gelu never produces.)
__device__ __forceinline__ float ex2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// rcp.approx.ftz.f32: 1 / x in one instruction, within 1 ulp; subnormal
// inputs and results flush to zero (the fused epilogue's silu takes the
// reciprocal of 1 + 2^a >= 1).
__device__ __forceinline__ float rcp_approx(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// mapa: the shared::cluster address of the same variable in CTA `rank` of
// the cluster (PTX ISA 9.7.9.19).
__device__ __forceinline__ uint32_t map_to_cta(const void* smem_ptr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(out)
               : "r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem_ptr))), "r"(rank));
  return out;
}

// mbarrier.arrive on a barrier of another CTA of the cluster (an address from
// map_to_cta), with the default .release.cta semantics. CCCL's shared::cluster
// arrive is .release.cluster, whose cluster-wide fence stalls the arriving
// warp on every k-block; the consumer's reads it orders (wgmma operand reads)
// are already complete when it arrives.
__device__ __forceinline__ void mbarrier_arrive_remote(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}

// The cluster-scoped forms, for hand-overs between the two CTAs of a 2-SM
// MMA pair (sm_100): the peer's reads (of shared or tensor memory) must be
// ordered before what the arrival releases in the other CTA.
__device__ __forceinline__ void mbarrier_arrive_remote_cluster(uint32_t cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_addr) : "memory");
}
// arrive + expect_tx on a barrier of any CTA of the cluster (the arming of a
// barrier that a multicast will complete).
__device__ __forceinline__ void mbarrier_arrive_expect_tx_remote(uint32_t cluster_addr, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], %1;\n" ::"r"(cluster_addr),
               "r"(bytes)
               : "memory");
}

// bar.sync id, count: a barrier over `count` threads (a multiple of 32).
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// createpolicy.fractional.L2::evict_first: a cache policy under which every
// line an access brings into L2 is among the first to be evicted.
__device__ __forceinline__ uint64_t l2_evict_first_policy() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// cp.async.bulk.tensor.{2d,3d}.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint:
// cuda::ptx::cp_async_bulk_tensor's load (the box at `coords` of the map into
// `dst`, completing `bar`), without multicast, with an L2 cache policy.
__device__ __forceinline__ void tma_load_with_policy(void* dst, const void* tmap, const int32_t (&coords)[2],
                                                     uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(coords[0]), "r"(coords[1]),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_load_with_policy(void* dst, const void* tmap, const int32_t (&coords)[3],
                                                     uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(reinterpret_cast<uint64_t>(tmap)), "r"(coords[0]), "r"(coords[1]), "r"(coords[2]),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar))), "l"(policy)
      : "memory");
}

// cp.async.bulk.tensor.{2d,3d,4d}.global.shared::cta.bulk_group.L2::cache_hint:
// cuda::ptx::cp_async_bulk_tensor's store (the box at `coords` of the map
// from `smem`, committed with the thread's next bulk group) with an L2 cache
// policy.
__device__ __forceinline__ void tma_store_with_policy(const void* tmap, const int32_t (&coords)[2], const void* smem,
                                                      uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\n" ::"l"(
          reinterpret_cast<uint64_t>(tmap)),
      "r"(coords[0]), "r"(coords[1]), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))), "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_store_with_policy(const void* tmap, const int32_t (&coords)[3], const void* smem,
                                                      uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2, %3}], [%4], %5;\n" ::"l"(
          reinterpret_cast<uint64_t>(tmap)),
      "r"(coords[0]), "r"(coords[1]), "r"(coords[2]), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))),
      "l"(policy)
      : "memory");
}
__device__ __forceinline__ void tma_store_with_policy(const void* tmap, const int32_t (&coords)[4], const void* smem,
                                                      uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2, %3, %4}], [%5], %6;\n" ::"l"(
          reinterpret_cast<uint64_t>(tmap)),
      "r"(coords[0]), "r"(coords[1]), "r"(coords[2]), "r"(coords[3]),
      "r"(static_cast<uint32_t>(__cvta_generic_to_shared(smem))), "l"(policy)
      : "memory");
}

}  // namespace tcgemm::detail
