// Correctness against tcgemm::reference_gemm: a shape sweep over every layout
// and dtype in numeric mode (random inputs, error bounds) and exact mode
// (small integers, bit for bit), and the alpha/beta epilogue.
#include <gtest/gtest.h>

#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "sm90/sm90_config.hpp"
#include "support/kernel_variants.hpp"

namespace tcgemm::test {
namespace {

struct SweepShape {
  const char* name;
  int64_t m, n, k;
  int64_t pad;  // extra elements per row beyond the rounded-up row length
};

// What each shape exercises (every case is there for a reason; none can pass by accident).
const SweepShape kSweepShapes[] = {
    {"aligned", 256, 512, 128, 0},
    {"one_past_a_tile", 129, 257, 65, 0},     // partial tiles in M, N and K; ld > row length
    {"smaller_than_a_tile", 17, 24, 40, 8},   // one partial tile; ld padded beyond the row
    {"k_wraps_the_ring", 192, 256, 1000, 0},  // 16 k-blocks through a 4-6 stage ring, partial tail
    {"many_tiles", 2048, 8192, 128, 0},       // more than 2x the SMs' tiles: the persistent loop
    {"model_512x4096x4096", 512, 4096, 4096, 0},
    {"model_77x3072x768", 77, 3072, 768, 0},  // ragged token count
    // Decoding (64-row tiles, A's box cut to M, C stored from registers):
    {"decode_1x4096x1024", 1, 4096, 1024, 0},   // one token
    {"decode_37x1000x520", 37, 1000, 520, 8},   // ragged M, N edge, K tail, padded ld
};

struct SweepParam {
  DType dtype;
  int layout;  // index into kLayouts
  int shape;   // index into kSweepShapes
  Fill fill;
  uint64_t seed;
};

std::vector<SweepParam> sweep_params() {
  std::vector<SweepParam> out;
  uint64_t seed = 1000;
  for (int s = 0; s < static_cast<int>(std::size(kSweepShapes)); ++s)
    for (int l = 0; l < 4; ++l)
      for (DType dt : {DType::f16, DType::bf16})
        for (Fill f : {Fill::uniform_pm1, Fill::small_int}) out.push_back({dt, l, s, f, ++seed});
  return out;
}

// Printed by gtest in failure lines instead of the parameter's raw bytes.
void PrintTo(const SweepParam& p, std::ostream* os) {
  const SweepShape& s = kSweepShapes[p.shape];
  *os << s.name << " m=" << s.m << " n=" << s.n << " k=" << s.k << " dtype=" << to_string(p.dtype)
      << " layout=" << layout_name(kLayouts[p.layout]) << " fill=" << to_string(p.fill) << " seed=" << p.seed;
}

std::string param_name(const ::testing::TestParamInfo<SweepParam>& info) {
  const SweepParam& p = info.param;
  return std::string(to_string(p.dtype)) + "_" + layout_name(kLayouts[p.layout]) + "_" + kSweepShapes[p.shape].name +
         (p.fill == Fill::small_int ? "_exact" : "_numeric");
}

class ShapeSweep : public GpuTest, public ::testing::WithParamInterface<SweepParam> {};

TEST_P(ShapeSweep, MatchesReference) {
  const SweepParam& p = GetParam();
  const SweepShape& s = kSweepShapes[p.shape];
  const GemmCase gc = make_case(p.dtype, kLayouts[p.layout], s.m, s.n, s.k, p.fill, p.seed, s.pad);
  const std::string what = gc.describe();
  SCOPED_TRACE(what);

  if (std::string(s.name) == "many_tiles") {
    // The shape is only worth its run time if it really needs the persistent loop.
    const int sms = device_sm_count();
    for (int bn : {128, 256}) {
      const sm90::Config cfg = sm90::select_config(s.m, s.n, s.k, sms, bn);
      ASSERT_GT(((s.m + 127) / 128) * ((s.n + bn - 1) / bn), 2 * static_cast<int64_t>(cfg.num_ctas))
          << "block_n=" << bn << " sms=" << sms;
    }
  }

  Problem prob(gc);
  const Plan ref = run_reference(prob.args(prob.c_ref()));
  TCGEMM_ASSERT_OK(ref, "reference_gemm " + what);

  const Plan planned = plan(prob.args(prob.c()));
  const Plan got = run_gemm(prob.args(prob.c()));
  TCGEMM_ASSERT_OK(got, "gemm " + what);
  EXPECT_EQ(got.backend, own_backend()) << "aligned inputs must run tcgemm's kernel; reason: " << got.reason;
  EXPECT_FALSE(got.kernel.empty());
  // plan() says what gemm() does.
  EXPECT_EQ(planned.status, got.status);
  EXPECT_EQ(planned.backend, got.backend);
  EXPECT_EQ(planned.kernel, got.kernel);

  expect_correct(prob, got, what);
}

INSTANTIATE_TEST_SUITE_P(AllLayoutsAndDtypes, ShapeSweep, ::testing::ValuesIn(sweep_params()), param_name);

// ---------------------------------------------------------------------------
// alpha and beta
// ---------------------------------------------------------------------------

struct Scaling {
  const char* name;
  float alpha, beta;
};
const Scaling kScalings[] = {
    {"half_plus_twice_c", 0.5f, 2.0f}, {"accumulate", 1.0f, 1.0f}, {"negate_plus_half_c", -1.0f, 0.5f}};

class AlphaBeta : public GpuTest {};

// With small integers in A, B and C and power-of-two scalings, alpha*acc and
// beta*C are exact in fp32: the epilogue must equal the reference bit for bit.
// M = 129: 128-row tiles (the shared-memory panel epilogue); M = 7: 64-row
// tiles (the register epilogue, its odd last column stored alone).
TEST_F(AlphaBeta, ExactWithIntegerC) {
  uint64_t seed = 5000;
  for (const Scaling& sc : kScalings)
    for (const Layout& layout : kLayouts)
      for (DType dt : {DType::f16, DType::bf16})
      for (const int64_t m : {129, 7}) {
        GemmCase gc = make_case(dt, layout, m, 257, 200, Fill::small_int, ++seed);
        gc.alpha = sc.alpha;
        gc.beta = sc.beta;
        const std::string what = std::string(sc.name) + " " + gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);
        prob.fill_outputs(Fill::small_int, seed + 77);
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        const Plan got = run_gemm(prob.args(prob.c()));
        TCGEMM_ASSERT_OK(got, "gemm " + what);
        EXPECT_EQ(got.backend, own_backend()) << got.reason;
        expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                         what);
      }
}

TEST_F(AlphaBeta, NumericWithRandomC) {
  uint64_t seed = 6000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16}) {
      GemmCase gc = make_case(dt, layout, 300, 520, 777, Fill::uniform_pm1, ++seed);
      gc.alpha = 0.5f;
      gc.beta = 2.0f;
      const std::string what = gc.describe();
      SCOPED_TRACE(what);
      Problem prob(gc);
      prob.fill_outputs(Fill::uniform_pm1, seed + 77);
      TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
      const Plan got = run_gemm(prob.args(prob.c()));
      TCGEMM_ASSERT_OK(got, "gemm " + what);
      expect_close(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc), dt, what);
      expect_within_bound(prob, got.backend, what);
    }
}

// beta == 0: C is never read, so its NaN poison must not reach the result.
TEST_F(AlphaBeta, BetaZeroIgnoresNaNInC) {
  uint64_t seed = 7000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16})
      for (float alpha : {1.0f, 0.5f}) {
        GemmCase gc = make_case(dt, layout, 200, 136, 96, Fill::small_int, ++seed);
        gc.alpha = alpha;
        gc.beta = 0.0f;
        const std::string what = gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);  // C and the reference C hold NaN poison
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), "gemm " + what);
        expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                         what);
      }
}

// Every built configuration that `takes` (a KernelVariant) and that builds
// for gc's layout, on gc scaled by `sc`: each must equal the reference bit
// for bit (integer inputs), with C filled from `c_seed` where beta != 0 and
// poisoned otherwise, and the padding and guard rows left as they were.
template <typename Takes>
void expect_every_configuration_exact(GemmCase gc, const Scaling& sc, uint64_t c_seed, Takes takes) {
  gc.alpha = sc.alpha;
  gc.beta = sc.beta;
  const std::string what = std::string(sc.name) + " " + gc.describe();
  SCOPED_TRACE(what);
  Problem prob(gc);
  if (sc.beta != 0.0f) prob.fill_outputs(Fill::small_int, c_seed);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
  const std::vector<uint16_t> ref = prob.download_ref();
  for (const support::KernelVariant& v : support::builtin_variants(own_backend())) {
    if (!v.builds(gc.op_a, gc.op_b) || !takes(v)) continue;
    if (sc.beta != 0.0f) prob.fill_outputs(Fill::small_int, c_seed);
    else prob.poison_c();
    const Plan got = run_gemm(prob.args(prob.c()), v.options);
    TCGEMM_ASSERT_OK(got, what + " " + v.label);
    expect_ran(got, v, what);
    expect_identical(compare(gc.dtype, prob.download_c(), ref, poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
                     what + " " + v.label);
  }
}
constexpr Scaling kPlain{"plain", 1.0f, 0.0f};
const auto kEveryConfiguration = [](const support::KernelVariant&) { return true; };

// Regression (found by `tcgemm check --fuzz`): when N % 8 != 0 the last panel
// of each tile row is stored element by element, not by TMA. The epilogue's
// two panel buffers were recycled by counting TMA store groups, so a clipped
// panel between two TMA-stored ones let the next panel overwrite a buffer that
// TMA was still reading: wrong values in the last column tile, at random,
// when the mainloop is short (K <= 8, 16-byte rows) and the tiles are many.
// Integer inputs make every configuration's result exact.
class RaggedEdge : public GpuTest {};

TEST_F(RaggedEdge, EveryConfigurationKeepsItsPanelBuffersApart) {
  uint64_t seed = 7000;
  // (NT too: the swapped kernel's tiles end in a panel the threads copy, between TMA-stored ones.)
  for (const Layout& layout : {kLayouts[0], kLayouts[1], kLayouts[3]})
    for (const int64_t k : {2, 8})
      expect_every_configuration_exact(make_case(DType::f16, layout, 7045, 1870, k, Fill::small_int, ++seed), kPlain,
                                       0, kEveryConfiguration);
}

// sm90's paired stores (N a multiple of 64, the plain epilogue, tiles 128 or
// 256 wide: two 64-column panels leave as one 64 x 128 box): widths whose
// last pair is whole (256), half past N (192, 320, 4160), with padded rows
// (the padding must keep its poison), alpha = 1 / beta = 0 and a scaled
// C; every configuration, integer inputs, so each must equal the reference
// bit for bit.
class PairedStores : public GpuTest {};

TEST_F(PairedStores, EveryConfigurationAtWidthsOfWholeBlocks) {
  uint64_t seed = 7500;
  for (const Layout& layout : {kLayouts[0], kLayouts[1]})
    for (const int64_t n : {192, 256, 320, 4160})
      for (const Scaling& sc : {kPlain, kScalings[0]}) {
        ++seed;
        expect_every_configuration_exact(make_case(DType::bf16, layout, 200, n, 72, Fill::small_int, seed, /*pad=*/64),
                                         sc, seed + 77, kEveryConfiguration);
      }
}

// The 64- and 8-row tiles store C from registers, each quad of threads (one
// row) exchanging its column pairs so that each thread writes 8 or 4
// adjacent columns at once (sm90's RegisterEpilogue). Every such
// configuration at right edges that end at each offset inside an 8-column
// group and inside a four-group step, at row counts that end inside an
// 8-row quad group (5) and inside a second 64-row block-row (70), with and
// without beta * C, padded rows that must keep their poison, both dtypes;
// integer inputs, so each must equal the reference bit for bit.
class RegisterStores : public GpuTest {};

TEST_F(RegisterStores, EveryRaggedEdgeOfTheSmallTiles) {
  uint64_t seed = 7700;
  for (const Layout& layout : {kLayouts[0], kLayouts[1]})
    for (DType dt : {DType::f16, DType::bf16})
      for (const int64_t m : {5, 70})
        for (const int64_t n : {1, 10, 27, 45, 63, 100, 134, 263})
          for (const Scaling& sc : {kPlain, kScalings[2]}) {
            ++seed;
            expect_every_configuration_exact(make_case(dt, layout, m, n, 40, Fill::small_int, seed, /*pad=*/8), sc,
                                             seed + 77, [](const support::KernelVariant& v) {
                                               return v.options.block_m != 0 && v.options.block_m <= 64;
                                             });
          }
}

}  // namespace
}  // namespace tcgemm::test
