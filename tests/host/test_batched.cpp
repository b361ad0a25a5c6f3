// Strided batched GEMM without a GPU: the validation of a batch (count,
// strides, C's matrices kept apart) and its messages, the raster over
// batch x tiles, the rank-3 tensor maps, the configuration choice counting
// every problem's tiles, dispatch (the cuBLAS fallback and the refusals), and
// the C ABI entry point's argument checks.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "common/host/tensor_map.hpp"
#include "common/host/validate.hpp"
#include "common/tile_order.hpp"
#include "dispatch/dispatch.hpp"
#include "sm100/sm100_config.hpp"
#include "sm90/sm90_config.hpp"
#include "tcgemm/tcgemm.h"
#include "host_support.hpp"

namespace tcgemm::detail {
namespace {

using tcgemm::test::contains;
bool built(const char* arch) { return std::strstr(TCGEMM_TEST_ARCHS, arch) != nullptr; }

// Never dereferenced: validation and dispatch look at values and alignment only.
const void* const kFakeA = reinterpret_cast<const void*>(uintptr_t{0x7f0000100000});
const void* const kFakeB = reinterpret_cast<const void*>(uintptr_t{0x7f0010000000});
void* const kFakeC = reinterpret_cast<void*>(uintptr_t{0x7f0020000000});

// A batch of 5 problems of 96 x 80 x 48 (NN), each matrix right after the
// previous one (strides a multiple of 8 elements: TMA can take it).
constexpr int64_t kM = 96, kN = 80, kK = 48, kBatch = 5;
GemmArgs batched_args() {
  GemmArgs g;
  g.m = kM;
  g.n = kN;
  g.k = kK;
  g.a = kFakeA;
  g.lda = kK;
  g.b = kFakeB;
  g.ldb = kN;
  g.c = kFakeC;
  g.ldc = kN;
  g.batch = kBatch;
  g.stride_a = kM * kK;
  g.stride_b = kK * kN;
  g.stride_c = kM * kN;
  return g;
}

// Rejected with every fragment and the whole case (describe) at the end.
void expect_rejected(const GemmArgs& g, std::initializer_list<std::string> fragments) {
  const std::string why = check_args(g);
  ASSERT_FALSE(why.empty()) << "accepted but should be rejected: " << describe(g);
  for (const auto& f : fragments) EXPECT_TRUE(contains(why, f)) << "'" << f << "' missing in: " << why;
  const std::string tail = " (" + describe(g) + ")";
  ASSERT_GE(why.size(), tail.size()) << why;
  EXPECT_EQ(why.substr(why.size() - tail.size()), tail) << "describe(args) is not appended: " << why;
}

TEST(BatchValidation, DescribeNamesTheBatchOnlyWhenThereIsOne) {
  GemmArgs g = batched_args();
  EXPECT_EQ(describe(g),
            "m=96 n=80 k=48 dtype=f16 layout=NN lda=48 ldb=80 ldc=80 batch=5 stride_a=4608 stride_b=3840 "
            "stride_c=7680");
  g.batch = 1;
  EXPECT_EQ(describe(g), "m=96 n=80 k=48 dtype=f16 layout=NN lda=48 ldb=80 ldc=80") << "a plain call reads as before";
  g.batch = 0;
  EXPECT_TRUE(contains(describe(g), "batch=0")) << "a wrong batch is shown: " << describe(g);
}

TEST(BatchValidation, AcceptsStackedSideBySideAndRepeatedOperands) {
  GemmArgs g = batched_args();
  EXPECT_EQ(check_args(g), "");
  g.stride_a = 0;  // one A for every batch
  EXPECT_EQ(check_args(g), "");
  g.stride_b = 0;  // and one B
  EXPECT_EQ(check_args(g), "");
  // Exactly the smallest stacked stride: C_i ends right before C_{i+1}.
  g.ldc = kN + 16;
  g.stride_c = (kM - 1) * g.ldc + kN;
  EXPECT_EQ(check_args(g), "");
  // Side by side: the C_i are column blocks of one M x (batch * N) matrix.
  g.ldc = kBatch * kN;
  g.stride_c = kN;
  EXPECT_EQ(check_args(g), "");
  // batch = 1 ignores the strides (C's stride included).
  GemmArgs plain = batched_args();
  plain.batch = 1;
  plain.stride_c = 0;
  EXPECT_EQ(check_args(plain), "");
  // An empty product writes nothing: no C can overlap.
  GemmArgs empty = batched_args();
  empty.n = 0;
  empty.stride_c = 0;
  EXPECT_EQ(check_args(empty), "");
}

TEST(BatchValidation, RejectsABadCountOrNegativeStrides) {
  GemmArgs g = batched_args();
  g.batch = -3;
  expect_rejected(g, {"batch must not be negative, not -3"});
  g.batch = int64_t{1} << 31;
  expect_rejected(g, {"batch above 2^31-1"});
  for (int which = 0; which < 3; ++which) {
    g = batched_args();
    (which == 0 ? g.stride_a : which == 1 ? g.stride_b : g.stride_c) = -8;
    expect_rejected(g, {"batch strides must not be negative"});
  }
}

TEST(BatchValidation, AnEmptyBatchOrABatchOfOneIgnoresTheStrides) {
  for (const int64_t batch : {0, 1}) {
    GemmArgs g = batched_args();
    g.batch = batch;
    g.stride_a = -1;  // neither is used
    g.stride_c = 0;
    EXPECT_EQ(check_args(g), "") << "batch " << batch;
  }
}

TEST(BatchValidation, RejectsOverlappingCMatrices) {
  GemmArgs g = batched_args();
  g.stride_c = (kM - 1) * kN + kN - 1;  // one element short of stacked
  expect_rejected(g, {"the batch's C matrices overlap", "stride_c=7679",
                      "at least (M - 1) * ldc + N = 7680", "side by side"});
  g.stride_c = 0;  // every batch into one C
  expect_rejected(g, {"the batch's C matrices overlap", "stride_c=0"});
  // Side by side, but the last block runs past the row.
  g.ldc = kBatch * kN - 1;
  g.stride_c = kN;
  expect_rejected(g, {"the batch's C matrices overlap"});
  // Side by side, but narrower than N: neighbours share columns.
  g.ldc = kBatch * kN;
  g.stride_c = kN - 8;
  expect_rejected(g, {"the batch's C matrices overlap"});
}

TEST(BatchValidation, RejectsStridesPastSixtyFourBitOffsets) {
  GemmArgs g = batched_args();
  g.stride_b = int64_t{1} << 62;
  expect_rejected(g, {"(batch - 1) x stride_b plus one matrix overflows 64-bit byte offsets"});
  g = batched_args();
  g.batch = (int64_t{1} << 31) - 1;
  g.stride_c = int64_t{1} << 33;
  expect_rejected(g, {"stride_c", "overflows"});
}

// ---------------------------------------------------------------------------
// The raster over batch x tiles
// ---------------------------------------------------------------------------

std::string describe(const GroupedRaster& r) {
  std::ostringstream s;
  s << "m_blocks=" << r.num_m_blocks << " n_blocks=" << r.num_n_blocks << " group_m=" << r.group_m
    << " batch=" << r.batch;
  return s.str();
}

TEST(BatchedRaster, IsABijectionOntoEveryProblemsTiles) {
  for (int batch : {1, 2, 3, 7, 37})
    for (int mb : {1, 2, 5, 9})
      for (int nb : {1, 3, 4})
        for (int g : {1, 2, 8}) {
          const GroupedRaster r{mb, nb, g, batch};
          SCOPED_TRACE(describe(r));
          ASSERT_EQ(r.num_tiles(), mb * nb * batch);
          std::set<std::tuple<int, int, int>> seen;
          for (int i = 0; i < r.num_tiles(); ++i) {
            const TileCoord t = r.tile(i);
            ASSERT_GE(t.batch, 0) << "index " << i;
            ASSERT_LT(t.batch, batch) << "index " << i;
            ASSERT_GE(t.m_block, 0) << "index " << i;
            ASSERT_LT(t.m_block, mb) << "index " << i;
            ASSERT_GE(t.n_block, 0) << "index " << i;
            ASSERT_LT(t.n_block, nb) << "index " << i;
            ASSERT_TRUE(seen.insert({t.batch, t.m_block, t.n_block}).second) << "index " << i << " visited twice";
          }
          ASSERT_EQ(static_cast<int>(seen.size()), r.num_tiles());
        }
}

// Batch b's tiles are the indices [b * tiles_per_batch, (b + 1) * ...), each
// problem in the plain grouped order; a plain raster is the batch-0 order.
TEST(BatchedRaster, EachProblemIsAContiguousRunInThePlainOrder) {
  const GroupedRaster plain{9, 4, 8};
  EXPECT_EQ(plain.batch, 1) << "a raster without a batch has one problem";
  const GroupedRaster r{9, 4, 8, 6};
  for (int i = 0; i < r.num_tiles(); ++i) {
    const TileCoord t = r.tile(i), p = plain.tile(i % plain.num_tiles());
    ASSERT_EQ(t.batch, i / plain.num_tiles()) << "index " << i;
    ASSERT_EQ(t.m_block, p.m_block) << "index " << i;
    ASSERT_EQ(t.n_block, p.n_block) << "index " << i;
  }
  for (int i = 0; i < plain.num_tiles(); ++i) {
    EXPECT_EQ(plain.tile(i).batch, 0);
    EXPECT_EQ(plain.tile(i).m_block, plain.in_batch(i).m_block);
    EXPECT_EQ(plain.tile(i).n_block, plain.in_batch(i).n_block);
  }
}

TEST(BatchedRaster, TileCountMustFitThirtyTwoBits) {
  // 2 tiles per problem: 2^30 problems make 2^31 tiles, one too many.
  EXPECT_TRUE(tile_count_fits_int32(256, 256, 128, 256, (int64_t{1} << 30) - 1));
  EXPECT_FALSE(tile_count_fits_int32(256, 256, 128, 256, int64_t{1} << 30));
  EXPECT_TRUE(tile_count_fits_int32(128, 128, 128, 128, (int64_t{1} << 31) - 1));
  EXPECT_FALSE(tile_count_fits_int32(128, 128, 128, 128, 0)) << "no batch has no tiles that fit";
}

// ---------------------------------------------------------------------------
// Rank-3 tensor maps
// ---------------------------------------------------------------------------

TEST(BatchedTensorMaps, RankThreeWithTheBatchStride) {
  const GemmArgs g = batched_args();
  const Tma2D a = tma_operand_a(g, 128, 64), b = tma_operand_b(g, 256, 64), c = tma_output_c(g, 64, 32);
  for (const auto& [name, t, stride] : {std::tuple<const char*, Tma2D, int64_t>{"A", a, g.stride_a},
                                        {"B", b, g.stride_b}, {"C", c, g.stride_c}}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(t.rank, 3);
    EXPECT_EQ(t.batches, static_cast<uint64_t>(kBatch));
    EXPECT_EQ(t.batch_stride, static_cast<uint64_t>(stride) * 2) << "bytes of 16-bit elements";
    EXPECT_EQ(tma_unsupported_reason(kFakeA, t), "");
  }
  // The 2-D part is the plain call's.
  GemmArgs plain = g;
  plain.batch = 1;
  const Tma2D p = tma_operand_a(plain, 128, 64);
  EXPECT_EQ(p.rank, 2) << "a plain call keeps rank 2";
  EXPECT_EQ(a.dims[0], p.dims[0]);
  EXPECT_EQ(a.dims[1], p.dims[1]);
  EXPECT_EQ(a.row_stride, p.row_stride);
  EXPECT_EQ(a.box[0], p.box[0]);
  EXPECT_EQ(a.box[1], p.box[1]);
}

TEST(BatchedTensorMaps, ARepeatedOperandHoldsOneMatrixAndBatchCoordinateZero) {
  GemmArgs g = batched_args();
  g.stride_a = 0;
  const Tma2D a = tma_operand_a(g, 128, 64);
  EXPECT_EQ(a.rank, 3);
  EXPECT_EQ(a.batches, 1u) << "one matrix for every batch";
  EXPECT_NE(a.batch_stride, 0u) << "TMA is never given a zero stride";
  EXPECT_EQ(tma_unsupported_reason(kFakeA, a), "");
  const BatchSteps steps = batch_steps(g);
  EXPECT_EQ(steps.a, 0) << "every batch reads A's matrix 0";
  EXPECT_EQ(steps.b, 1);
  g.stride_b = 0;
  EXPECT_EQ(batch_steps(g).b, 0);
}

TEST(BatchedTensorMaps, StridesTmaCannotTakeAreNamed) {
  GemmArgs g = batched_args();
  g.stride_b += 4;  // not a multiple of 8 elements (16 bytes)
  const std::string why = gemm_maps_unsupported_reason(g, tma_operand_a(g, 128, 64), tma_operand_b(g, 256, 64),
                                                       tma_output_c(g, 64));
  EXPECT_TRUE(contains(why, "B: batch stride of")) << why;
  EXPECT_TRUE(contains(why, "not a multiple of 16")) << why;
  g = batched_args();
  g.stride_c = (int64_t{1} << 39);  // 2^40 bytes
  EXPECT_TRUE(contains(tma_unsupported_reason(kFakeC, tma_output_c(g, 64)), "2^40 or more"));
}

// ---------------------------------------------------------------------------
// Configuration: every problem's tiles count
// ---------------------------------------------------------------------------

// M a multiple of the 128-row tile: a batch of b problems is as many tiles as
// one problem b times as tall, and the sm90 choice must see it so.
TEST(BatchedConfig, Sm90CountsBatchTimesTiles) {
  for (const auto& [m, n, k, batch] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{128, 128, 64, 32},
                                       {256, 1024, 512, 3}, {512, 512, 4096, 37}, {1024, 4096, 1024, 7}}) {
    std::ostringstream what;
    what << "m=" << m << " n=" << n << " k=" << k << " batch=" << batch;
    SCOPED_TRACE(what.str());
    sm90::ConfigRequest request;
    request.batch = batch;
    const sm90::Config c = sm90::select_config(m, n, k, 132, request);
    const sm90::Config tall = sm90::select_config(m * batch, n, k, 132);
    EXPECT_EQ(c.block_m, tall.block_m);
    EXPECT_EQ(c.block_n, tall.block_n);
    EXPECT_EQ(c.pingpong, tall.pingpong);
    EXPECT_EQ(c.num_ctas, tall.num_ctas);
  }
}

// Small problems in numbers (the reason batches exist): one 64 x 64 x 64
// problem takes one CTA, 128 of them take 128 of the 132 SMs in one launch.
TEST(BatchedConfig, SmallProblemsFillTheGpuTogether) {
  sm90::ConfigRequest request;
  request.b_k_major = false;  // NN
  const sm90::Config one = sm90::select_config(64, 64, 64, 132, request);
  EXPECT_EQ(one.num_ctas, 1);
  request.batch = 128;
  const sm90::Config many = sm90::select_config(64, 64, 64, 132, request);
  EXPECT_EQ(many.block_m, 64);
  EXPECT_EQ(many.block_n, 64);
  EXPECT_EQ(many.num_ctas, 128);
  // Attention-like: 32 heads of 128 x 128 x 64 spread over more than 32 SMs.
  request.batch = 32;
  const sm90::Config heads = sm90::select_config(128, 128, 64, 132, request);
  EXPECT_GT(heads.num_ctas, 32) << sm90::describe(heads);
  // sm100: 128 single-CTA tiles of 64 x 64 problems, one each.
  const sm100::Config b200 = sm100::select_config(64, 64, 64, 148, 0, Schedule::automatic, 0, false, 128);
  EXPECT_EQ(b200.cta_group(), 1);
  EXPECT_EQ(b200.num_tiles, 128);
  EXPECT_EQ(b200.grid_clusters, 128);
}

TEST(BatchedConfig, Sm100NarrowForcedWidthNeverOverflowsTheTileCount) {
  // M = 1, N = 65536: 2^19 problems of 16-wide single-CTA tiles, or 2^20 of
  // 32-wide ones, would be 2^31 tiles (64-wide ones a quarter or half of
  // that): the 2-CTA tiles take them.
  for (const int width : {16, 32}) {
    const int64_t batch = (int64_t{1} << 31) / (65536 / width);
    const sm100::Config c = sm100::select_config(1, 65536, 64, 148, width, Schedule::automatic, 0, true, batch);
    EXPECT_GT(c.num_tiles, 0) << "width " << width;
    EXPECT_NE(c.block_n, width) << "width " << width;
    // Half that batch fits: the forced width stays.
    EXPECT_EQ(sm100::select_config(1, 65536, 64, 148, width, Schedule::automatic, 0, true, batch / 2).block_n, width);
  }
}

TEST(BatchedConfig, Sm100CountsBatchTimesTilesAndKeepsTheClcLimit) {
  // 8 problems of 2048 x 2048: as many tiles as one 16384 x 2048.
  const sm100::Config c = sm100::select_config(2048, 2048, 1024, 148, 0, Schedule::automatic, 0, true, 8);
  const sm100::Config tall = sm100::select_config(16384, 2048, 1024, 148);
  EXPECT_EQ(c.block_n, tall.block_n);
  EXPECT_EQ(c.num_tiles, tall.num_tiles);
  EXPECT_EQ(c.schedule, Schedule::cluster_launch_control);
  EXPECT_EQ(c.grid_clusters, c.num_tiles) << "CLC: one cluster per tile of every problem";
  // One 256 x 256 tile per problem: 2^30 - 1 problems still fit CLC's grid
  // (2 CTAs a tile), 2^30 do not: persistent there.
  const sm100::Config fits =
      sm100::select_config(256, 256, 64, 148, 256, Schedule::automatic, 2, true, (int64_t{1} << 30) - 1);
  EXPECT_EQ(fits.num_tiles, (1 << 30) - 1);
  EXPECT_EQ(fits.schedule, Schedule::cluster_launch_control);
  const sm100::Config over = sm100::select_config(256, 256, 64, 148, 256, Schedule::automatic, 2, true,
                                                  int64_t{1} << 30);
  EXPECT_EQ(over.num_tiles, 1 << 30);
  EXPECT_EQ(over.schedule, Schedule::persistent);
  EXPECT_EQ(over.grid_clusters, 74);
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

const DeviceInfo kH200{0, 9, 0, 132, "H200 (test)", cudaSuccess};
const DeviceInfo kB200{0, 10, 0, 148, "B200 (test)", cudaSuccess};

TEST(BatchedDispatch, TmaCompatibleBatchesRunTheKernel) {
  for (const DeviceInfo& dev : {kH200, kB200}) {
    if (!built(dev.cc_major == 9 ? "sm_90a" : "sm_100a")) continue;
    const Decision d = decide(batched_args(), Options{}, dev);
    EXPECT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.path, Path::kernel) << d.plan.reason;
  }
}

TEST(BatchedDispatch, StridesTmaCannotTakeFallBackToStridedBatchedCublasOrAreRefused) {
  GemmArgs g = batched_args();
  g.stride_a += 1;  // A_1 is not 16-byte aligned
  for (const DeviceInfo& dev : {kH200, kB200}) {
    const Decision d = decide(g, Options{}, dev);
    EXPECT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.path, Path::cublas);
    EXPECT_EQ(d.plan.kernel, "cublasGemmStridedBatchedEx");
    if (built(dev.cc_major == 9 ? "sm_90a" : "sm_100a")) {
      EXPECT_TRUE(contains(d.plan.reason, "fallback: A: batch stride of")) << d.plan.reason;
    }
    Options only;
    only.prefer = Prefer::tcgemm_only;
    const Decision refused = decide(g, only, dev);
    EXPECT_EQ(refused.plan.status, Status::unsupported);
    EXPECT_TRUE(contains(refused.plan.reason, "no tcgemm kernel can take this call")) << refused.plan.reason;
    EXPECT_TRUE(contains(refused.plan.reason, "batch=5")) << refused.plan.reason;
    // A fused epilogue cannot fall back: cuBLAS has none.
    GemmArgs fused = g;
    fused.activation = Activation::relu;
    const Decision no_fuse = decide(fused, Options{}, dev);
    EXPECT_EQ(no_fuse.plan.status, Status::unsupported);
    EXPECT_TRUE(contains(no_fuse.plan.reason, "cuBLAS cannot fuse")) << no_fuse.plan.reason;
  }
  Options cublas;
  cublas.prefer = Prefer::cublas_only;
  EXPECT_EQ(decide(batched_args(), cublas, kH200).plan.kernel, "cublasGemmStridedBatchedEx");
  GemmArgs plain = batched_args();
  plain.batch = 1;
  EXPECT_EQ(decide(plain, cublas, kH200).plan.kernel, "cublasGemmEx") << "a plain call is unchanged";
}

TEST(BatchedDispatch, TooManyTilesForThirtyTwoBitsFallBack) {
  GemmArgs g = batched_args();
  g.m = 4096;
  g.n = 4096;
  g.lda = g.k;
  g.ldb = g.n;
  g.ldc = g.n;
  g.stride_a = g.m * g.k;
  g.stride_b = g.k * g.n;
  g.stride_c = g.m * g.n;
  g.batch = (int64_t{1} << 31) - 1;  // 32 x 64 tiles of 128 x 64 each
  // (Operands 2^50 and 2^56 bytes long: fake addresses far enough apart that they do not overlap.)
  g.a = reinterpret_cast<const void*>(uintptr_t{1} << 52);
  g.b = reinterpret_cast<const void*>(uintptr_t{1} << 53);
  g.c = reinterpret_cast<void*>(uintptr_t{1} << 56);
  ASSERT_EQ(check_args(g), "");
  const Decision d = decide(g, Options{}, kH200);
  EXPECT_EQ(d.plan.path, Path::cublas);
  if (built("sm_90a")) {
    EXPECT_TRUE(contains(d.plan.reason, "batch x M x N has more output tiles than 32-bit tile indices reach"))
        << d.plan.reason;
  }
}

TEST(BatchedDispatch, KZeroScalesEveryC) {
  GemmArgs g = batched_args();
  g.k = 0;
  g.beta = 2.0f;
  const Decision d = decide(g, Options{}, kH200);
  EXPECT_EQ(d.plan.path, Path::scale);
}

// ---------------------------------------------------------------------------
// The C ABI entry point: validation before any device is touched
// ---------------------------------------------------------------------------

int call(const GemmArgs& g, int dtype = 0) {
  return tcgemm_gemm_strided_batched(dtype, static_cast<int>(g.op_a), static_cast<int>(g.op_b), g.m, g.n, g.k,
                                     g.alpha, g.a, g.lda, g.stride_a, g.b, g.ldb, g.stride_b, g.beta, g.c, g.ldc,
                                     g.stride_c, g.batch, nullptr);
}

TEST(CApiStridedBatched, ArgumentErrorsAreNamed) {
  GemmArgs g = batched_args();
  g.batch = -1;
  EXPECT_EQ(call(g), static_cast<int>(Status::invalid_argument));
  EXPECT_TRUE(contains(tcgemm_last_error(), "batch must not be negative, not -1")) << tcgemm_last_error();
  g = batched_args();
  g.stride_c = 8;
  EXPECT_EQ(call(g), static_cast<int>(Status::invalid_argument));
  EXPECT_TRUE(contains(tcgemm_last_error(), "C matrices overlap")) << tcgemm_last_error();
  g = batched_args();
  g.stride_b = -64;
  EXPECT_EQ(call(g), static_cast<int>(Status::invalid_argument));
  EXPECT_TRUE(contains(tcgemm_last_error(), "must not be negative")) << tcgemm_last_error();
  EXPECT_EQ(call(batched_args(), 9), static_cast<int>(Status::invalid_argument));
  EXPECT_TRUE(contains(tcgemm_last_error(), "unknown dtype 9")) << tcgemm_last_error();
  // Every parameter lands in its field: the message quotes them back.
  g = batched_args();
  g.batch = -7;
  g.stride_a = 11;
  g.stride_b = 22;
  g.stride_c = 33;
  EXPECT_NE(call(g), 0);
  EXPECT_TRUE(contains(tcgemm_last_error(), "batch=-7 stride_a=11 stride_b=22 stride_c=33")) << tcgemm_last_error();
}

TEST(CApiStridedBatched, WithoutADeviceAValidCallSaysSo) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  cudaGetLastError();
  if (err == cudaSuccess && count > 0) GTEST_SKIP() << "a CUDA device is visible; this test covers machines without one";
  const int rc = call(batched_args());
  EXPECT_TRUE(rc == static_cast<int>(Status::no_device) || rc == static_cast<int>(Status::cuda_error)) << rc;
  EXPECT_GT(std::strlen(tcgemm_last_error()), 0u);
}

}  // namespace
}  // namespace tcgemm::detail
