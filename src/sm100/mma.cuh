// The sm100 MMA issuer's work: in the leader CTA, one thread issues every
// tcgen05.mma of the pair (cta_group::2: one 256 x BLOCK_N MMA over both
// CTAs' stages, each CTA's 128 rows of the fp32 accumulator landing in its own
// tensor memory), and tcgen05.commit hands stages and accumulators on: its
// arrival, multicast to both CTAs, comes when the MMAs issued before it have
// completed. A single-CTA tile (cta_group::1) is one 128 x BLOCK_N MMA with
// the same accumulator layout in its CTA's tensor memory, or one 64 x BLOCK_N
// MMA (BLOCK_M = 64), whose rows fill half of the lanes (tmem_lane).
//
// Numerics: each MMA adds 16 products of K per row and column in order into
// the fp32 accumulator; the epilogue rounds once (cvt.rn), as the sm90 kernel.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda/ptx>
#include <cuda_bf16.h>

#include "sm100/shared_storage.cuh"
#include "sm100/umma_desc.hpp"

namespace tcgemm::sm100 {

template <typename Element, int BLOCK_N, Major A_MAJOR, Major B_MAJOR, int CTA_GROUP = kCtaGroup,
          int BLOCK_M = kBlockM>
struct MainloopMma {
  using Stage = StageLayout<BLOCK_N, CTA_GROUP, BLOCK_M>;
  static constexpr int kM = BLOCK_M * CTA_GROUP;  // 256 over a pair, 128 or 64 alone
  static_assert(CTA_GROUP == 2 ? valid_2sm_mma_shape(kM, BLOCK_N) : valid_1sm_mma_shape(kM, BLOCK_N),
                "not a tcgen05.mma shape for this CTA group");
  static_assert(kBlockK * sizeof(Element) == detail::kSwizzleBytes, "a k-block is one 128-byte swizzle line");
  static constexpr uint32_t kIdesc =
      instr_desc_f16(std::is_same_v<Element, __nv_bfloat16>, A_MAJOR, B_MAJOR, kM, BLOCK_N);
  static constexpr uint16_t kBothCtas = 0b11;

  // The low words of the descriptors of stage 0's A and B (the same offsets
  // in both CTAs); every other descriptor of the ring is one of them moved by
  // a constant (detail::desc_lo_moved), and the high words are compile-time
  // constants: the issuer's k-loop does one add per operand instead of
  // building each MMA's descriptors afresh (shift, mask, or).
  uint32_t a_lo;
  uint32_t b_lo;
  static constexpr uint32_t kHiA = detail::desc_hi(operand_desc(A_MAJOR, 0, kBlockK));
  static constexpr uint32_t kHiB = detail::desc_hi(operand_desc(B_MAJOR, 0, kBlockK));
  static_assert(kSmemLimit <= detail::kDescAddressLimit, "desc_lo_moved is exact below 256 KiB");

  // ring_addr: the shared address of the ring.
  __device__ __forceinline__ explicit MainloopMma(uint32_t ring_addr)
      : a_lo(detail::desc_lo(operand_desc(A_MAJOR, ring_addr, kBlockK))),
        b_lo(detail::desc_lo(operand_desc(B_MAJOR, ring_addr + Stage::kABytes, kBlockK))) {}

  // The MMAs of k-block kb (in `stage`) into the accumulator at `d_tmem`: the
  // first k-block of a tile overwrites it, later ones add to it.
  __device__ __forceinline__ void issue(int stage, uint32_t d_tmem, int kb) const {
    const uint32_t stage_a = detail::desc_lo_moved(a_lo, stage * Stage::kStageBytes);
    const uint32_t stage_b = detail::desc_lo_moved(b_lo, stage * Stage::kStageBytes);
#pragma unroll
    for (int ks = 0; ks < kBlockK / kMmaK; ++ks) {
      const uint64_t da =
          detail::desc_from_words(kHiA, detail::desc_lo_moved(stage_a, ks * detail::k_step_bytes(A_MAJOR)));
      const uint64_t db =
          detail::desc_from_words(kHiB, detail::desc_lo_moved(stage_b, ks * detail::k_step_bytes(B_MAJOR)));
      if constexpr (CTA_GROUP == 2) {
        cuda::ptx::tcgen05_mma(cuda::ptx::kind_f16, cuda::ptx::cta_group_2, d_tmem, da, db, kIdesc, kb > 0 || ks > 0);
      } else {
        cuda::ptx::tcgen05_mma(cuda::ptx::kind_f16, cuda::ptx::cta_group_1, d_tmem, da, db, kIdesc, kb > 0 || ks > 0);
      }
    }
  }

  // Arrives on `bar` in every CTA of the group once every MMA issued so far
  // is complete: a stage's smem_empty (its CTAs may refill it) or an
  // accumulator's acc_full (their epilogues may read it).
  __device__ __forceinline__ static void commit_to_group(uint64_t* bar) {
    if constexpr (CTA_GROUP == 2) {
      cuda::ptx::tcgen05_commit_multicast(cuda::ptx::cta_group_2, bar, kBothCtas);
    } else {
      cuda::ptx::tcgen05_commit(cuda::ptx::cta_group_1, bar);
    }
  }
};

}  // namespace tcgemm::sm100
