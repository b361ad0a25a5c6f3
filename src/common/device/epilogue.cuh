// Epilogue pieces shared by the kernel families: the parameters, fp32 <->
// fp16/bf16 packing (round to nearest even, as cuBLAS), and the clipped copy
// of a swizzled output panel for the one edge TMA cannot store exactly.
#pragma once

#include <cstdint>
#include <type_traits>

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/device/barrier.cuh"
#include "common/device/ptx_wrappers.cuh"
#include "common/gelu.hpp"
#include "common/gelu_tanh.hpp"
#include "common/silu.hpp"
#include "common/smem_layout.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

struct EpilogueParams {
  float alpha;
  float beta;  // 0: C is never read
  // C itself, for the one case TMA cannot store exactly: TMA writes whole
  // 16-byte chunks, so when N % 8 != 0 a store of the last column panel would
  // also write the row padding past N (which may be another tensor's data).
  // Those panels are copied out with per-element bounds checks instead.
  void* c;
  int64_t ldc;
  int m, n;
  // The fused epilogue (GemmArgs::bias, bias_type, activation): C =
  // act(alpha * acc + bias[col]) + beta * C. bias null: none.
  const void* bias = nullptr;
  int bias_f32 = 0;    // bias elements are fp32 (else the output's type)
  int activation = 0;  // tcgemm::Activation
  // A strided batch (GemmArgs::batch > 1): C's TMA map is rank 3 (batched:
  // every TMA copy of C names its batch), and the stores that write C
  // element by element (the ragged edge, the register epilogues) start batch
  // b's matrix at c + b * stride_c. 0 and 0 for a plain call; 1 and 0 for an
  // M-grouped one (rank-3 maps, one C).
  int batched = 0;
  int64_t stride_c = 0;
  // sm90's paired stores (sm90_config.hpp, pairs_c): C's map is the
  // pair map, {64 columns, N / 64 blocks, rows [, batch]}, and the epilogue
  // stores two 64-column panels of a stripe at a time. 0: the panel map.
  int paired = 0;
  // Non-zero: the TMA stores of C carry an L2 evict-first policy, so that a
  // C larger than L2 streams through it without evicting the operands that
  // tiles still to run will read again (Config::c_evict_first).
  int c_evict_first = 0;
  // Debug builds only (TCGEMM_DEBUG_HANGS): non-zero breaks the first ring
  // barrier on purpose (its arrival count doubled), so tests can provoke the
  // hang report (tests/gpu/test_hang.cpp). Set from the environment variable
  // TCGEMM_DEBUG_BREAK_BARRIER by the launchers; ignored by release kernels.
  int debug_break_barrier = 0;
};

// A call's epilogue parameters (the launchers of every family).
inline EpilogueParams epilogue_params(const GemmArgs& args) {
  EpilogueParams epi{args.alpha, args.beta, args.c, args.ldc, static_cast<int>(args.m), static_cast<int>(args.n)};
  epi.bias = args.bias;
  epi.bias_f32 = args.bias_type == BiasType::f32 ? 1 : 0;
  epi.activation = static_cast<int>(args.activation);
  if (args.batch > 1) {
    epi.batched = 1;
    epi.stride_c = args.stride_c;
  }
  if (args.grouped()) epi.batched = 1;  // (rank-3 maps; C is one matrix, stored at batch 0)
  return epi;
}

// Whether the output panel starting at column panel_n0, kPanelCols wide, can
// go out through a TMA store (see EpilogueParams::c).
template <int kPanelCols>
__device__ __forceinline__ bool panel_tma_storable(const EpilogueParams& epi, int panel_n0) {
  return (epi.n % 8) == 0 || panel_n0 + kPanelCols <= epi.n;
}

// The arrival count of the operand ring's full barriers: 1 (the producer's
// arrive with the TMA bytes), or in debug builds 2 when a test breaks them on
// purpose (debug_break_barrier).
__device__ __forceinline__ uint32_t ring_full_arrivals(const EpilogueParams& epi) {
#if defined(TCGEMM_DEBUG_HANGS)
  return epi.debug_break_barrier ? 2u : 1u;
#else
  (void)epi;
  return 1u;
#endif
}

template <typename Element>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<Element, __half>) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  } else {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&h);
  }
}

template <typename Element>
__device__ __forceinline__ float2 unpack2(uint32_t bits) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __half22float2(*reinterpret_cast<__half2*>(&bits));
  } else {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&bits));
  }
}

// One value each way (the ragged last column of a row): the same rounding as
// pack2, and the exact widening of unpack2.
template <typename Element>
__device__ __forceinline__ Element round_to(float x) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __float2half_rn(x);
  } else {
    return __float2bfloat16_rn(x);
  }
}
template <typename Element>
__device__ __forceinline__ float widen(Element x) {
  if constexpr (std::is_same_v<Element, __half>) {
    return __half2float(x);
  } else {
    return __bfloat162float(x);
  }
}

// x[i] += beta * c[i] for N values (8 in a panel's 16 columns), c packed two
// per word (as a panel or a row of C holds them); x already holds alpha *
// accumulator. fp32 throughout, rounded once later by pack2.
template <typename Element, int N>
__device__ __forceinline__ void add_beta_c(float (&x)[N], float beta, const uint32_t (&c)[N / 2]) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const float2 old = unpack2<Element>(c[i]);
    x[2 * i] = fmaf(beta, old.x, x[2 * i]);
    x[2 * i + 1] = fmaf(beta, old.y, x[2 * i + 1]);
  }
}

// Whether a call has a fused epilogue (GemmArgs::fused_epilogue), for the
// kernels that decide at run time (the reference GEMM, the K == 0 scale);
// the tiled kernels are built with and without it (with_epilogue_kind).
__device__ __forceinline__ bool fused_epilogue(const EpilogueParams& epi) {
  return epi.bias != nullptr || epi.activation != 0;
}

// x / (1 + 2^a) as the hardware computes it: x * rcp(1 + 2^a) with ex2.approx
// and rcp.approx. silu and the tanh gelu are both x times a logistic, each
// with its own exponent a (common/silu.hpp, common/gelu_tanh.hpp).
__device__ __forceinline__ float times_logistic(float x, float a) { return x * rcp_approx(1.0f + ex2_approx(a)); }

// The activation of the fused epilogue in fp32 (tcgemm::Activation; the
// formulas are torch.nn.functional's).
__device__ __forceinline__ float activate(float x, int activation) {
  switch (activation) {
    case 1: return x < 0.0f ? 0.0f : x;  // relu (NaN stays NaN)
    case 2: return gelu_from_tail(x, ex2_approx(gelu_log2_tail(gelu_tail_argument(x))));  // gelu: common/gelu.hpp
    case 3: return times_logistic(x, gelu_tanh_exp2_argument(x));  // gelu's tanh approximation
    case 4: return times_logistic(x, silu_exp2_argument(x));       // silu
    default: return x;
  }
}

// The fused epilogue's bias for column `col` in fp32: 0 without a bias, and
// for columns past N (whose values are never stored). The epilogues load
// their columns' bias before they touch the accumulators, all loads at once:
// one at a time, each behind the shared-memory instructions of the element
// before it, they made the fused epilogue several times slower than the
// plain one (docs/PERF.md, "Fused epilogue").
// Plain loads, not __ldg: the compiler may hoist a non-coherent load above
// the null check that guards it (it did in the reference GEMM, reading from
// address 0 when the call had no bias).
template <typename Element>
__device__ __forceinline__ float bias_at(const EpilogueParams& epi, int col) {
  if (epi.bias == nullptr || col >= epi.n) return 0.0f;
  return epi.bias_f32 ? static_cast<const float*>(epi.bias)[col]
                      : widen<Element>(static_cast<const Element*>(epi.bias)[col]);
}

// The bias of columns col and col + 1 (col even) as bias_at gives them, in
// one 4- or 8-byte load where the pair is inside N and the bias aligned for
// it (no alignment is asked of the bias: a misaligned one is read one
// element at a time).
template <typename Element>
__device__ __forceinline__ float2 bias_pair_at(const EpilogueParams& epi, int col) {
  const auto address = reinterpret_cast<uintptr_t>(epi.bias);
  if (epi.bias == nullptr || col + 1 >= epi.n || address % (epi.bias_f32 ? 8 : 4) != 0)
    return make_float2(bias_at<Element>(epi, col), bias_at<Element>(epi, col + 1));
  if (epi.bias_f32) return static_cast<const float2*>(epi.bias)[col / 2];
  return unpack2<Element>(static_cast<const uint32_t*>(epi.bias)[col / 2]);
}

// alpha * acc + bias in one fused multiply-add, rounded once (__fmaf_rn:
// spelled out, so that no kernel is left to the compiler's choice of
// contraction): every kernel and the reference compute the same fp32 value.
// At alpha = 1 it is acc + bias exactly as two operations would give it; it
// is one instruction an element where the fused epilogue is most of a tile's
// work (a short K).
__device__ __forceinline__ float pre_activation(float alpha, float acc, float bias) {
  return __fmaf_rn(alpha, acc, bias);
}

// The tiled kernels' epilogue kind as a compile-time constant: kPlainEpilogue
// (alpha * acc, no fused code at all) or a tcgemm::Activation (0 none, ...,
// 4 silu) with the bias. A kernel built with the fused epilogue picks its
// activation with one uniform branch per tile on sm90 (around the epilogue
// alone) and once per CTA on sm100 (around the epilogue warps' tile loop,
// which holds no mainloop) (with_activation), so that no switch on it is left
// in the per-element code: a run-time switch there compiled to an indirect
// branch per 8 elements, and cost the fused epilogue 5-28% even for ReLU
// (docs/PERF.md, "Fused epilogue").
inline constexpr int kPlainEpilogue = -1;

// Calls f(std::integral_constant<int, A>{}) for the call's activation A.
template <typename F>
__device__ __forceinline__ void with_activation(int activation, F&& f) {
  switch (activation) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    default: f(std::integral_constant<int, 0>{}); break;
  }
}

// The activation ACT applied to every element of v.
template <int ACT, int N>
__device__ __forceinline__ void activate_all(float (&v)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = activate(v[i], ACT);
}

// The fused epilogue's value for column `col` of C, before beta * C (fp32,
// not yet rounded): act(alpha * acc + bias[col]). The reference GEMM and the
// K == 0 scale call it per element; the tiled kernels compute the same from
// preloaded bias (bias_at, pre_activation, activate_all).
template <typename Element>
__device__ __forceinline__ float epilogue_value(const EpilogueParams& epi, float acc, int col) {
  return activate(pre_activation(epi.alpha, acc, bias_at<Element>(epi, col)), epi.activation);
}

// Within each quad of lanes (lanes 4i .. 4i + 3; `quad_lane` = lane % 4),
// each holding W words (W = 2 or 4): the exchange that moves word g of quad
// lane s to quad lane (s & ~(W - 1)) | g, as its word s % W. At W = 4 that
// is the 4 x 4 transpose; at W = 2 lanes 0-1 and 2-3 each swap a word.
// One round of exchanges per bit of g (lane bit 0, then bit 1), W / 2
// shuffles each; every lane of the warp must take part. Its own inverse.
template <int W>
__device__ __forceinline__ void quad_exchange(uint32_t (&w)[W], int quad_lane) {
  static_assert(W == 2 || W == 4, "2 or 4 words");
#pragma unroll
  for (int bit = 1; bit < W; bit <<= 1) {
    const bool upper = (quad_lane & bit) != 0;
#pragma unroll
    for (int g = 0; g < W; ++g) {
      if (g & bit) continue;
      // Of the slots g and g | bit, the lane keeps the one whose bit matches
      // its own and swaps the other with its partner's.
      const uint32_t got = __shfl_xor_sync(0xffffffffu, upper ? w[g] : w[g | bit], bit);
      if (upper) w[g] = got;
      else w[g | bit] = got;
    }
  }
}

// W words (1, 2 or 4: 2 W columns) of a row of C from column `col`: one
// 4 W-byte access where they are all inside N, element by element at a
// ragged right edge, nothing past N nor where !row_ok (read as zeros).
// Whole accesses: C's base 16-byte aligned, ldc a multiple of 8 (what TMA
// needs too) and `col` a multiple of 2 W.
template <int W, typename Element>
__device__ __forceinline__ void load_row_words(const Element* c_row, int col, bool row_ok, const EpilogueParams& epi,
                                               uint32_t (&w)[W]) {
  static_assert((W == 1 || W == 2 || W == 4) && sizeof(Element) == 2, "4, 8 or 16 bytes, two columns a word");
  const uint16_t* const in = reinterpret_cast<const uint16_t*>(c_row + col);
  if (row_ok && col + 2 * W <= epi.n) {
    if constexpr (W == 4) {
      const uint4 v = *reinterpret_cast<const uint4*>(in);
      w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (W == 2) {
      const uint2 v = *reinterpret_cast<const uint2*>(in);
      w[0] = v.x, w[1] = v.y;
    } else {
      w[0] = *reinterpret_cast<const uint32_t*>(in);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < W; ++i) {
    const uint32_t lo = row_ok && col + 2 * i < epi.n ? in[2 * i] : 0u;
    const uint32_t hi = row_ok && col + 2 * i + 1 < epi.n ? in[2 * i + 1] : 0u;
    w[i] = lo | hi << 16;
  }
}
template <int W, typename Element>
__device__ __forceinline__ void store_row_words(Element* c_row, int col, bool row_ok, const EpilogueParams& epi,
                                                const uint32_t (&w)[W]) {
  static_assert((W == 1 || W == 2 || W == 4) && sizeof(Element) == 2, "4, 8 or 16 bytes, two columns a word");
  uint16_t* const out = reinterpret_cast<uint16_t*>(c_row + col);
  if (!row_ok || col >= epi.n) return;
  if (col + 2 * W <= epi.n) {
    if constexpr (W == 4) *reinterpret_cast<uint4*>(out) = make_uint4(w[0], w[1], w[2], w[3]);
    else if constexpr (W == 2) *reinterpret_cast<uint2*>(out) = make_uint2(w[0], w[1]);
    else *reinterpret_cast<uint32_t*>(out) = w[0];
    return;
  }
#pragma unroll
  for (int i = 0; i < 2 * W; ++i)
    if (col + i < epi.n) out[i] = static_cast<uint16_t>(w[i / 2] >> (16 * (i % 2)));
}

// Stores 2 W adjacent columns of a row of C from column `col` (W = 1, 2 or 4),
// x holding alpha * accumulator (with a fused epilogue: after the
// activation): beta * C added in fp32 (C read only when beta != 0), each
// value rounded once, then one access (load_row_words, store_row_words).
template <typename Element, int W>
__device__ __forceinline__ void store_row_run(Element* c_row, int col, bool row_ok, const EpilogueParams& epi,
                                              float (&x)[2 * W]) {
  uint32_t w[W];
  if (epi.beta != 0.0f) {
    load_row_words(c_row, col, row_ok, epi, w);
    add_beta_c<Element>(x, epi.beta, w);
  }
#pragma unroll
  for (int i = 0; i < W; ++i) w[i] = pack2<Element>(x[2 * i], x[2 * i + 1]);
  store_row_words(c_row, col, row_ok, epi, w);
}

// Two adjacent columns (col even): x0 and x1 for columns `col` and `col` + 1
// (the last column of an odd N is stored alone; columns past N not at all).
template <typename Element>
__device__ __forceinline__ void store_pair(Element* c_row, int col, const EpilogueParams& epi, float x0, float x1) {
  float x[2] = {x0, x1};
  store_row_run<Element, 1>(c_row, col, true, epi, x);
}

// The same for GROUPS (2 or 4) 8-column groups of one row of C held by a
// quad of lanes that each hold a column pair of every group (the wgmma
// accumulator layout: quad lane q holds columns 8 g + 2 q and 8 g + 2 q + 1
// of group g): x[2 g + e] is the value of column col0 + 8 g + 2 q + e.
// quad_exchange hands each lane 2 * GROUPS adjacent columns (a whole group
// at 4), which it stores as one 4 * GROUPS-byte access: a warp writes
// 16 * GROUPS contiguous bytes of each of its 8 rows where column pairs
// would write 16 (half a 32-byte sector) GROUPS times. With beta != 0 the
// quad reads C's columns the same way and exchanges them back before the
// fp32 sum. Every lane of the warp must call it (the shuffles); `row_ok`
// says whether this lane's row is inside C. col0: a multiple of 8.
template <typename Element, int GROUPS>
__device__ __forceinline__ void store_row_groups(Element* c_row, int col0, int quad_lane, bool row_ok,
                                                 const EpilogueParams& epi, float (&x)[2 * GROUPS]) {
  // This lane's columns once exchanged: 2 * GROUPS of group quad_lane % GROUPS.
  const int col = col0 + 8 * (quad_lane % GROUPS) + 2 * GROUPS * (quad_lane / GROUPS);
  uint32_t w[GROUPS];
  if (epi.beta != 0.0f) {
    load_row_words(c_row, col, row_ok, epi, w);
    quad_exchange(w, quad_lane);  // (back to the accumulator's pairs)
    add_beta_c<Element>(x, epi.beta, w);
  }
#pragma unroll
  for (int g = 0; g < GROUPS; ++g) w[g] = pack2<Element>(x[2 * g], x[2 * g + 1]);
  quad_exchange(w, quad_lane);
  store_row_words(c_row, col, row_ok, epi, w);
}

// Batch b's matrix of C, for the stores that address it element by element.
template <typename Element>
__device__ __forceinline__ Element* c_matrix(const EpilogueParams& epi, int batch) {
  return static_cast<Element*>(epi.c) + static_cast<int64_t>(batch) * epi.stride_c;
}

// Loads the box of C at `coord` (C's map's coordinates, RANK of them) into
// `dst` through TMA (beta != 0): the issuing thread arms `loaded` with the
// box's bytes and starts the copy, every thread of the group waits for it.
// `phases` holds the barrier's phase in bit `bit` and is flipped.
template <int RANK>
__device__ __forceinline__ void load_c_box(const CUtensorMap* tmap_c, const int32_t (&coord)[RANK], void* dst,
                                           uint32_t bytes, uint64_t* loaded, bool issuer, uint32_t& phases, int bit) {
  if (issuer) {
    cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared,
                                         loaded, bytes);
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, dst, tmap_c, coord, loaded);
  }
  wait_barrier(loaded, (phases >> bit) & 1, "c_loaded", bit, "epilogue");
  phases ^= 1u << bit;
}

// The box at `coord` of C's map (panel or pair map, rank RANK) from `src` in
// shared memory: one TMA store, committed with the issuing thread's next bulk
// group, carrying an L2 evict-first policy where epi.c_evict_first
// (common/output_policy.hpp).
template <int RANK>
__device__ __forceinline__ void store_c_box(const CUtensorMap* tmap_c, const EpilogueParams& epi,
                                            const int32_t (&coord)[RANK], const void* src) {
  if (epi.c_evict_first)
    tma_store_with_policy(tmap_c, coord, src, l2_evict_first_policy());
  else
    cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, tmap_c, coord, src);
}

// The C panel at (col0, row0) of batch `batch` into `panel` (load_c_box).
__device__ __forceinline__ void load_c_panel(const CUtensorMap* tmap_c, const EpilogueParams& epi, int col0, int row0,
                                             int batch, void* panel, uint32_t bytes, uint64_t* loaded, bool issuer,
                                             uint32_t& phases, int bit) {
  if (epi.batched) {
    const int32_t coord[3] = {col0, row0, batch};
    load_c_box(tmap_c, coord, panel, bytes, loaded, issuer, phases, bit);
  } else {
    const int32_t coord[2] = {col0, row0};
    load_c_box(tmap_c, coord, panel, bytes, loaded, issuer, phases, bit);
  }
}

// Copies the first COLS columns (a multiple of 8, at most 64) of a ROWS x 64
// output panel (128B-swizzled in shared memory) to C at (row0, col0) of batch
// `batch` with THREADS threads (thread = this one's index among them),
// skipping everything outside M x N: one 16-byte chunk (8 columns) at a time
// where the chunk is inside N, element by element at a ragged right edge.
// 16-byte aligned: C's base is, and ldc is a multiple of 8 (what the C map
// needs). For the ragged right edge when N % 8 != 0, and for the narrower
// last panel of a tile whose width is not whole 64-column panels (the C
// map's 64-column box would write over the next tile).
// (No unrolling asked: unrolled, the copy cost the fused ping-pong kernel
// with A MN-major 16 bytes of spills.)
template <typename Element, int ROWS, int THREADS, int COLS>
__device__ __forceinline__ void copy_panel_to_c(const uint8_t* panel, const EpilogueParams& epi, int row0, int col0,
                                                int batch, int thread) {
  static_assert(COLS % 8 == 0 && COLS <= 64, "whole 16-byte chunks of a 64-column panel");
  constexpr int kChunks = COLS / 8;  // per row
  Element* c = c_matrix<Element>(epi, batch);
  for (int i = thread; i < ROWS * kChunks; i += THREADS) {
    const int r = i / kChunks, col = col0 + 8 * (i % kChunks);
    if (row0 + r >= epi.m || col >= epi.n) continue;
    const uint8_t* chunk = panel + swizzled_offset(r, col - col0);
    Element* dst = c + static_cast<int64_t>(row0 + r) * epi.ldc + col;
    if (col + 8 <= epi.n) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(chunk);
    } else {
      for (int e = 0; col + e < epi.n; ++e) dst[e] = reinterpret_cast<const Element*>(chunk)[e];
    }
  }
}

// Stores a finished ROWS x 64 output panel (swizzled in shared memory) at
// C's (row0, col0) of batch `batch` (0 for a plain call), written by THREADS
// threads of which `issuer` is one; `sync()` joins them. Through TMA where
// it can (panel_tma_storable): every writer makes its generic-proxy writes
// visible to the async proxy, the issuer stores and commits a bulk group. Otherwise (the ragged right
// edge when N % 8 != 0) the threads copy it (copy_panel_to_c), and the issuer commits an empty
// bulk group: every panel commits exactly one group, so the double-buffered
// epilogue's cp_async_bulk_wait_group_read<kEpiBuffers - 1> before reusing a
// buffer always waits for that buffer's own last store. (Without the empty
// group, a clipped panel between two TMA-stored ones let the next panel
// overwrite a buffer that TMA was still reading; found by check --fuzz.)
// ROW_END: epi.m is where this tile's rows end (an M-grouped call's group
// end), not where C's map clips: a panel past it is copied by the threads.
template <typename Element, int ROWS, int THREADS, bool ROW_END = false, typename Sync>
__device__ __forceinline__ void store_panel(const CUtensorMap* tmap_c, const EpilogueParams& epi, int row0, int col0,
                                            int batch, void* panel, int thread, bool issuer, Sync sync) {
  if (panel_tma_storable<64>(epi, col0) && (!ROW_END || row0 + ROWS <= epi.m)) {
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    sync();
    if (issuer) {
      if (epi.batched) {
        const int32_t coord[3] = {col0, row0, batch};
        store_c_box(tmap_c, epi, coord, panel);
      } else {
        const int32_t coord[2] = {col0, row0};
        store_c_box(tmap_c, epi, coord, panel);
      }
    }
  } else {
    sync();
    copy_panel_to_c<Element, ROWS, THREADS, 64>(static_cast<const uint8_t*>(panel), epi, row0, col0, batch, thread);
    // These generic reads come before a later TMA load of C into the buffer.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  if (issuer) cuda::ptx::cp_async_bulk_commit_group();
}

// Stores the first COLS columns of a finished ROWS x 64 output panel at C's
// (row0, col0): the narrower last panel of a tile whose width is not whole
// 64-column panels, which the threads copy (copy_panel_to_c). Commits one
// (empty) bulk group, as store_panel does, so the panel buffers' accounting
// holds.
template <typename Element, int ROWS, int THREADS, int COLS, typename Sync>
__device__ __forceinline__ void store_panel_narrow(const EpilogueParams& epi, int row0, int col0, int batch,
                                                   const void* panel, int thread, bool issuer, Sync sync) {
  sync();
  copy_panel_to_c<Element, ROWS, THREADS, COLS>(static_cast<const uint8_t*>(panel), epi, row0, col0, batch, thread);
  // These generic reads come before a later TMA load of C into the buffer.
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  if (issuer) cuda::ptx::cp_async_bulk_commit_group();
}

}  // namespace tcgemm::detail
