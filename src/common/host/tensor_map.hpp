// TMA tensor maps: the parameters (pure host arithmetic, unit-tested) and their
// encoding through the driver's cuTensorMapEncodeTiled.
#pragma once

#include <cstdint>
#include <string>

#include <cuda.h>

#include "common/tile_order.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// A 2D row-major matrix seen by TMA: dims[0] is the contiguous (inner)
// dimension. Boxes are copied with a `swizzle`-byte swizzle (128, or 64 or
// 32 for the narrow panels of an MN-major B), so box[0] * 2 bytes must be
// <= swizzle and the base and row stride must be multiples of 16 bytes.
//
// A batched call (GemmArgs::batch > 1) makes every map rank 3: a third
// dimension of `batches` matrices `batch_stride` bytes apart (a multiple of
// 16 too), and boxes one matrix deep. An operand repeated for every batch
// (stride 0) holds one matrix (batches = 1, its batch_stride never applied):
// the kernels give it batch coordinate 0 (BatchSteps), so TMA never sees a
// zero stride. An M-grouped call (GemmArgs::groups) has rank-3 maps too: B's
// holds a matrix per group, A's and C's one. A plain call keeps rank 2.
struct Tma2D {
  uint64_t dims[2];        // {columns, rows} of the stored matrix, in elements
  uint64_t row_stride;     // bytes between rows (leading dimension * 2)
  uint32_t box[2];         // {box columns, box rows}
  uint32_t swizzle = 128;  // bytes: 128, 64 or 32
  int rank = 2;            // 3 for a batched call
  uint64_t batches = 1;    // rank 3: matrices in the map
  uint64_t batch_stride = 0;  // rank 3: bytes between them
};

// Operand maps for a BLOCK_M x BLOCK_N x BLOCK_K tile, by storage:
//   A op N (M x K, K contiguous):  box {BLOCK_K, BLOCK_M}          one load per stage
//   A op T (K x M, M contiguous):  box {64, BLOCK_K}               BLOCK_M / 64 loads
//   B op N (K x N, N contiguous):  box {P, BLOCK_K}                BLOCK_N / P loads, P = 64 (or
//                                                                  32, 16 where 64 does not divide
//                                                                  BLOCK_N: detail::mn_panel_cols,
//                                                                  a 2P-byte swizzle)
//   B op T (N x K, K contiguous):  box {BLOCK_K, BLOCK_N / cluster} one load (a cluster's
//                                                                  CTAs load a half each)
Tma2D tma_operand_a(const GemmArgs& args, int block_m, int block_k);
Tma2D tma_operand_b(const GemmArgs& args, int block_n, int block_k, int cluster_m = 1);
//   C       (M x N):               box {panel, panel_rows}         epilogue panels
Tma2D tma_output_c(const GemmArgs& args, int panel, int panel_rows = 0);

// C cut into 64-column blocks, for sm90's paired stores (sm90/epilogue.cuh,
// store_pairs): dims {64 columns, N / 64 blocks, M rows [, batches]}, byte
// strides {128 (the next block), ldc * 2 [, stride_c * 2]}, box {64, 2, 64
// [, 1]}, a 128-byte swizzle. One box is two 64 x 64 panels side by side,
// stored row by row in shared memory (common/smem_layout.hpp,
// paired_swizzled_offset), so each of its rows is 256 contiguous bytes of C.
// Rank 3, or 4 for a batched call. N must be a multiple of 64 (the blocks
// end at N); C's other constraints are the panel map's (tma_output_c).
struct TmaPairs {
  int rank = 3;
  uint64_t dims[4] = {};
  uint64_t strides[3] = {};  // bytes, of dims 1.. (dim 0 is contiguous)
  uint32_t box[4] = {};
};
TmaPairs tma_output_c_pairs(const GemmArgs& args);
// Encodes it (128-byte swizzle, zero fill); returns a CUDA driver result.
CUresult encode_tma_pairs(CUtensorMap* out, DType dtype, const void* base, const TmaPairs& map);
// Why TMA cannot describe this matrix, or empty. (Base 16-byte aligned, row
// stride (and batch stride) a multiple of 16 bytes and below 2^40, dims in
// [1, 2^32].)
std::string tma_unsupported_reason(const void* base, const Tma2D& map);

// Why TMA cannot take a GEMM call whose A, B and C maps are these (the
// operand's name and the reason), or empty: a kernel family's can_implement.
std::string gemm_maps_unsupported_reason(const GemmArgs& args, const Tma2D& a, const Tma2D& b, const Tma2D& c);

// Encodes with the map's swizzle and zero fill (rank 2, or 3 for a batch);
// returns a CUDA driver result.
CUresult encode_tma_2d(CUtensorMap* out, DType dtype, const void* base, const Tma2D& map);

// The batch steps of a call's A and B maps (1, or 0 for an operand of stride
// 0 repeated for every batch, and for an M-grouped call's A).
BatchSteps batch_steps(const GemmArgs& args);

// The three maps of a GEMM call (A, B, C with the given boxes), encoded.
struct GemmTensorMaps {
  CUtensorMap a, b, c;
  // The map for the tiles whose box would run past an operand's end, with
  // the box cut to the rows there are (a copy of the operand's map where the
  // box is not cut): A's for the tiles of the last block-row, whose rows run
  // past M (encode_a_tail), or B's for those of the last block of N
  // (encode_b_tail: the swapped kernels, whose B is the call's tokens).
  // encode_gemm_maps does not set it.
  CUtensorMap tail;
  // The bytes of one k-block of the tail map's box: what a tile that loads
  // through it expects of each k-block's copy (set with `tail`).
  uint32_t tail_bytes = 0;
  // Whether `c` is sm90's pair map (tma_output_c_pairs) rather than the panel
  // map: set by the launcher that encoded it, passed on to the kernel
  // (EpilogueParams::paired). encode_gemm_maps does not set it.
  bool c_pairs = false;
};
// Empty on success, else which map failed and the driver's result. A null
// `c` (a kernel that stores C from registers) leaves out->c zeroed.
std::string encode_gemm_maps(const GemmArgs& args, const Tma2D& a, const Tma2D& b, const Tma2D* c,
                             GemmTensorMaps* out);

// The call as the swapped kernel (sm90's swap_ab) sees it: C^T = op(B)^T
// op(A)^T, so its A is the call's B and its B the call's A (M and N, the
// leading dimensions, the batch strides and the ops trade places; an op
// flips: a K-major B stays K-major as the kernel's A). C, its map and the
// epilogue keep the call's own M, N and ldc.
GemmArgs swapped_operands(const GemmArgs& args);

// The rows of A's box for the tiles of the last block-row of `block_m`-row
// tiles, whose rows run past M: the rows of M there, rounded up to 8, at
// most `rows` (the box of the other tiles). The rows past M are never
// stored, and a box that runs past the tensor's end costs time for the rows
// TMA zero-fills (docs/PERF.md). For A K-major (op_a = N); the families
// decide which tiles take it.
int a_tail_box_rows(const GemmArgs& args, int block_m, int rows);
// The same for B stored K-major (op_b = T) and the tiles of the last block
// of N, `block_n` wide: the columns of N there, rounded up to 8.
int b_tail_box_rows(const GemmArgs& args, int block_n, int rows);
// out->tail: A's map with a box of `tail_rows` rows (of `block_k`), or a
// copy of out->a where that is its box (`rows`). Empty on success, as
// encode_gemm_maps.
std::string encode_a_tail(const GemmArgs& args, int rows, int tail_rows, int block_k, GemmTensorMaps* out);
// out->tail: B's map (op_b = T) with a box of `tail_rows` rows of N, or a
// copy of out->b where that is its box (`rows`).
std::string encode_b_tail(const GemmArgs& args, int rows, int tail_rows, int block_k, GemmTensorMaps* out);

}  // namespace tcgemm::detail
