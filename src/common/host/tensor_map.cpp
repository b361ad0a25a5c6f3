#include "common/host/tensor_map.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <utility>

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "common/host/device.hpp"
#include "common/host/validate.hpp"
#include "common/smem_layout.hpp"

namespace tcgemm::detail {

namespace {
// The map of one operand: `stride` elements between the matrices of a batch
// (rank 3 when args.batch > 1, and for an M-grouped call, whose B has a
// matrix per group; a stride of 0 keeps one matrix).
Tma2D make(const GemmArgs& args, StoredShape s, int64_t ld, int64_t stride, uint32_t box_cols, uint32_t box_rows) {
  Tma2D t{};
  t.dims[0] = static_cast<uint64_t>(s.cols);
  t.dims[1] = static_cast<uint64_t>(s.rows);
  t.row_stride = static_cast<uint64_t>(ld) * 2;
  t.box[0] = box_cols;
  t.box[1] = box_rows;
  if (args.batch > 1 || args.grouped()) {
    t.rank = 3;
    t.batches = stride == 0 ? 1 : static_cast<uint64_t>(args.grouped() ? args.groups : args.batch);
    // (One matrix: any valid stride, never applied; the row stride is one.)
    t.batch_stride = stride == 0 ? t.row_stride : static_cast<uint64_t>(stride) * 2;
  }
  return t;
}
}  // namespace

Tma2D tma_operand_a(const GemmArgs& a, int block_m, int block_k) {
  // (An M-grouped call's A is one matrix, whatever stride_a holds; C's too.)
  const int64_t stride = a.grouped() ? 0 : a.stride_a;
  return a.op_a == Op::N ? make(a, stored_shape_a(a), a.lda, stride, block_k, block_m)
                         : make(a, stored_shape_a(a), a.lda, stride, 64, block_k);
}

Tma2D tma_operand_b(const GemmArgs& a, int block_n, int block_k, int cluster_m) {
  if (a.op_b == Op::T) return make(a, stored_shape_b(a), a.ldb, a.stride_b, block_k, block_n / cluster_m);
  // One panel of this CTA's columns per box (a cluster's CTAs load whole
  // 64-wide panels each: the width is a multiple of 128 there).
  const uint32_t panel = mn_panel_cols(block_n / cluster_m);
  Tma2D t = make(a, stored_shape_b(a), a.ldb, a.stride_b, panel, block_k);
  t.swizzle = 2 * panel;
  return t;
}

Tma2D tma_output_c(const GemmArgs& a, int panel, int panel_rows) {
  return make(a, StoredShape{a.m, a.n}, a.ldc, a.grouped() ? 0 : a.stride_c, panel, panel_rows > 0 ? panel_rows : panel);
}

TmaPairs tma_output_c_pairs(const GemmArgs& a) {
  TmaPairs t;
  t.dims[0] = 64;
  t.dims[1] = static_cast<uint64_t>(a.n / 64);
  t.dims[2] = static_cast<uint64_t>(a.m);
  t.strides[0] = 128;
  t.strides[1] = static_cast<uint64_t>(a.ldc) * 2;
  t.box[0] = 64;
  t.box[1] = 2;
  t.box[2] = 64;
  if (a.batch > 1) {
    t.rank = 4;
    t.dims[3] = static_cast<uint64_t>(a.batch);
    t.strides[2] = static_cast<uint64_t>(a.stride_c) * 2;
    t.box[3] = 1;
  }
  return t;
}

BatchSteps batch_steps(const GemmArgs& a) {
  return BatchSteps{a.stride_a == 0 || a.grouped() ? 0 : 1, a.stride_b == 0 ? 0 : 1};
}

// std::to_string and snprintf rather than iostreams: see validate.cpp.
std::string tma_unsupported_reason(const void* base, const Tma2D& t) {
  const auto addr = reinterpret_cast<uintptr_t>(base);
  if (addr % 16 != 0) {
    char ptr[32];
    std::snprintf(ptr, sizeof ptr, "%p", base);
    return "base address " + std::string(ptr) + " is not 16-byte aligned";
  }
  if (t.row_stride % 16 != 0)
    return "row stride of " + std::to_string(t.row_stride) +
           " bytes is not a multiple of 16 (leading dimension not a multiple of 8)";
  if (t.row_stride >= (uint64_t{1} << 40)) return "row stride of " + std::to_string(t.row_stride) + " bytes is 2^40 or more";
  if (t.rank == 3) {
    if (t.batch_stride % 16 != 0)
      return "batch stride of " + std::to_string(t.batch_stride) +
             " bytes is not a multiple of 16 (element stride not a multiple of 8)";
    if (t.batch_stride >= (uint64_t{1} << 40))
      return "batch stride of " + std::to_string(t.batch_stride) + " bytes is 2^40 or more";
    if (t.batches < 1 || t.batches > (uint64_t{1} << 32))
      return "batch of " + std::to_string(t.batches) + " matrices is outside [1, 2^32]";
  }
  if (t.dims[0] < 1 || t.dims[1] < 1 || t.dims[0] > (uint64_t{1} << 32) || t.dims[1] > (uint64_t{1} << 32))
    return "dimensions " + std::to_string(t.dims[0]) + " x " + std::to_string(t.dims[1]) + " are outside [1, 2^32]";
  if ((t.swizzle != 128 && t.swizzle != 64 && t.swizzle != 32) || t.box[0] * 2 > t.swizzle || t.box[0] == 0 ||
      t.box[1] == 0 || t.box[1] > 256)
    return "box " + std::to_string(t.box[0]) + " x " + std::to_string(t.box[1]) + " does not fit a " +
           std::to_string(t.swizzle) + "-byte swizzle";
  return {};
}

namespace {
PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static const auto fn =
      reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver_entry_point("cuTensorMapEncodeTiled"));
  return fn;
}
}  // namespace

CUresult encode_tma_2d(CUtensorMap* out, DType dtype, const void* base, const Tma2D& t) {
  auto fn = encode_fn();
  if (fn == nullptr) return CUDA_ERROR_NOT_FOUND;
  // (Rank 2 reads the first two entries of each array; rank 3 adds the batch, one matrix per box.)
  const cuuint64_t dims[3] = {t.dims[0], t.dims[1], t.batches};
  const cuuint64_t strides[2] = {t.row_stride, t.batch_stride};
  const cuuint32_t box[3] = {t.box[0], t.box[1], 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  return fn(out, dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            static_cast<cuuint32_t>(t.rank), const_cast<void*>(base), dims, strides, box, elem_strides,
            CU_TENSOR_MAP_INTERLEAVE_NONE,
            t.swizzle == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
            : t.swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                              : CU_TENSOR_MAP_SWIZZLE_32B,
            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

CUresult encode_tma_pairs(CUtensorMap* out, DType dtype, const void* base, const TmaPairs& t) {
  auto fn = encode_fn();
  if (fn == nullptr) return CUDA_ERROR_NOT_FOUND;
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  return fn(out, dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            static_cast<cuuint32_t>(t.rank), const_cast<void*>(base), t.dims, t.strides, t.box, elem_strides,
            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

std::string encode_gemm_maps(const GemmArgs& args, const Tma2D& a, const Tma2D& b, const Tma2D* c,
                             GemmTensorMaps* out) {
  struct Map {
    CUtensorMap* out;
    const void* base;
    const Tma2D* params;
    const char* name;
  };
  const Map maps[] = {{&out->a, args.a, &a, "A"}, {&out->b, args.b, &b, "B"}, {&out->c, args.c, c, "C"}};
  out->c = CUtensorMap{};
  for (const auto& m : maps) {
    if (m.params == nullptr) continue;
    const CUresult r = encode_tma_2d(m.out, args.dtype, m.base, *m.params);
    if (r != CUDA_SUCCESS)
      return std::string("cuTensorMapEncodeTiled failed for ") + m.name + " (CUresult " + std::to_string(r) + ")";
  }
  return {};
}

GemmArgs swapped_operands(const GemmArgs& args) {
  GemmArgs s = args;
  const auto flip = [](Op op) { return op == Op::N ? Op::T : Op::N; };
  s.op_a = flip(args.op_b);
  s.op_b = flip(args.op_a);
  s.m = args.n;
  s.n = args.m;
  s.a = args.b;
  s.lda = args.ldb;
  s.b = args.a;
  s.ldb = args.lda;
  s.stride_a = args.stride_b;
  s.stride_b = args.stride_a;
  return s;
}

namespace {
// The rows of the last block of `extent` (blocks `block` long), rounded up
// to 8, at most `rows`.
int last_block_rows(int64_t extent, int block, int rows) {
  if (extent <= 0) return rows;
  const int64_t last = extent - (ceil_div(extent, block) - 1) * block;
  return static_cast<int>(std::min<int64_t>(rows, ceil_div(last, 8) * 8));
}

// out->tail: `whole` where the box is not cut, else `map` encoded; `what`
// names it in the error. out->tail_bytes: `tail_rows` rows of `block_k`
// fp16/bf16 elements.
std::string encode_tail(const GemmArgs& args, const CUtensorMap& whole, bool cut, const void* base, const Tma2D& map,
                        int tail_rows, int block_k, const char* what, GemmTensorMaps* out) {
  out->tail = whole;
  out->tail_bytes = static_cast<uint32_t>(tail_rows) * static_cast<uint32_t>(block_k) * 2;
  if (!cut) return {};
  const CUresult r = encode_tma_2d(&out->tail, args.dtype, base, map);
  if (r != CUDA_SUCCESS)
    return std::string("cuTensorMapEncodeTiled failed for ") + what + " (CUresult " + std::to_string(r) + ")";
  return {};
}
}  // namespace

int a_tail_box_rows(const GemmArgs& args, int block_m, int rows) {
  return args.op_a == Op::N ? last_block_rows(args.m, block_m, rows) : rows;
}

int b_tail_box_rows(const GemmArgs& args, int block_n, int rows) {
  return args.op_b == Op::T ? last_block_rows(args.n, block_n, rows) : rows;
}

std::string encode_a_tail(const GemmArgs& args, int rows, int tail_rows, int block_k, GemmTensorMaps* out) {
  return encode_tail(args, out->a, tail_rows != rows, args.a, tma_operand_a(args, tail_rows, block_k), tail_rows,
                     block_k, "A's last block-row", out);
}

std::string encode_b_tail(const GemmArgs& args, int rows, int tail_rows, int block_k, GemmTensorMaps* out) {
  return encode_tail(args, out->b, tail_rows != rows, args.b, tma_operand_b(args, tail_rows, block_k), tail_rows,
                     block_k, "B's last block of N", out);
}

std::string gemm_maps_unsupported_reason(const GemmArgs& args, const Tma2D& a, const Tma2D& b, const Tma2D& c) {
  const std::pair<const char*, std::string> checks[] = {{"A", tma_unsupported_reason(args.a, a)},
                                                        {"B", tma_unsupported_reason(args.b, b)},
                                                        {"C", tma_unsupported_reason(args.c, c)}};
  for (const auto& [name, why] : checks)
    if (!why.empty()) return std::string(name) + ": " + why;
  return {};
}

}  // namespace tcgemm::detail
