// The 8-row decode tile (sm90, BLOCK_M = 8: A's 8 rows read as all eight
// 8-row groups of an m64 wgmma, 4 k-blocks a ring stage): the same bits as
// the 64-row tile of the same width and the reference's, at M = 1..8 and
// forced over more rows (a block-row per 8), with K tails (a partial last
// k-block, a last stage of fewer k-blocks, K < 64), ragged N, beta != 0 and
// the fused epilogue; nothing stored past row M.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_case.hpp"

namespace tcgemm::test {
namespace {

class DecodeTile : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (own_backend() != Backend::sm90) GTEST_SKIP() << "the 8-row decode tile is sm90's";
  }
};

constexpr int kDecodeWidths[] = {8, 16, 32, 40, 48, 64};
constexpr Layout kNT = kLayouts[1];  // op_a = N, op_b = T: x @ W^T, the only layout it is built for

Options tile(int block_n, int block_m) {
  Options o;
  o.prefer = Prefer::tcgemm_only;
  o.block_n = block_n;
  o.block_m = block_m;
  return o;
}

// C from `prob` as the GEMM with `options` leaves it, starting from the
// outputs' fill (beta != 0) or poison; the plan must be the forced tile.
std::vector<uint16_t> run_tile(Problem& prob, const Options& options, float beta, const std::string& what,
                               Plan* plan_out = nullptr) {
  prob.poison_c();
  if (beta != 0.0f) prob.fill_outputs(Fill::uniform_pm1, prob.gemm_case().seed + 5);
  const Plan p = run_gemm(prob.args(prob.c()), options);
  EXPECT_EQ(p.status, Status::ok) << what << ": " << p.reason;
  EXPECT_EQ(p.config.block_m, options.block_m) << what << " ran " << p.kernel;
  EXPECT_EQ(p.config.block_n, options.block_n) << what << " ran " << p.kernel;
  if (plan_out != nullptr) *plan_out = p;
  return prob.download_c();
}

// Every decode width against the 64-row tile of that width (bit for bit) and
// the reference (within the bounds), for numeric inputs.
TEST_F(DecodeTile, SameBitsAsTheSixtyFourRowTile) {
  struct Shape {
    int64_t m, n, k;
  };
  // K: 1000 (a partial last k-block, a last stage of 16 - 15 = 4 - 3: one
  // k-block fewer), 832 = 3 stages of 4 k-blocks + 1 (a last stage of one
  // k-block), 1024 (whole stages), 40 (one partial k-block), 64 (one whole).
  // N: multiples of no width (1000, 2052, 330) and of all (4096). M = 20 and
  // 64: forced over more than 8 rows (3 and 8 block-rows of 8).
  const Shape shapes[] = {{1, 4096, 1000}, {2, 1000, 832}, {3, 2052, 1024}, {5, 330, 40}, {7, 1000, 64},
                          {8, 4096, 832},  {20, 1000, 1000}, {64, 330, 832}, {8, 2052, 4160}};
  uint64_t seed = 91000;
  for (const Shape& s : shapes)
    for (DType dt : {DType::f16, DType::bf16})
      for (const float beta : {0.0f, 0.5f}) {
        GemmCase gc = make_case(dt, kNT, s.m, s.n, s.k, Fill::uniform_pm1, ++seed);
        gc.beta = beta;
        gc.alpha = beta != 0.0f ? 0.75f : 1.0f;
        const std::string what = gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);
        prob.poison_outputs();
        if (beta != 0.0f) prob.fill_outputs(Fill::uniform_pm1, gc.seed + 5);
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        const std::vector<uint16_t> ref = prob.download_ref();
        for (const int w : kDecodeWidths) {
          const std::string cfg = what + " width " + std::to_string(w);
          Plan p8;
          const std::vector<uint16_t> c8 = run_tile(prob, tile(w, 8), beta, cfg + " block_m 8", &p8);
          EXPECT_TRUE(contains(p8.kernel, ",8x" + std::to_string(w) + "x256,")) << p8.kernel;
          const std::vector<uint16_t> c64 = run_tile(prob, tile(w, 64), beta, cfg + " block_m 64");
          // Identical images, guard rows and padding included.
          EXPECT_TRUE(c8 == c64) << cfg << ": the 8-row tile differs from the 64-row tile: "
                                 << compare(dt, c8, c64, poison_bits(dt), gc.m, gc.n, gc.ldc).summary();
          expect_close(compare(dt, c8, ref, poison_bits(dt), gc.m, gc.n, gc.ldc), dt, cfg);
        }
      }
}

// Small integers: every product and sum exact, so the decode tile equals the
// reference bit for bit, with beta and with the fused epilogue (bias, each
// activation), at M = 1, 8 and 20 (forced).
TEST_F(DecodeTile, ExactOnIntegersWithTheFusedEpilogue) {
  const Activation acts[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                             Activation::silu};
  uint64_t seed = 92000;
  for (const int64_t m : {1, 8, 20})
    for (DType dt : {DType::f16, DType::bf16}) {
      GemmCase gc = make_case(dt, kNT, m, 1000, 1000, Fill::small_int, ++seed);
      gc.beta = 1.0f;
      Problem prob(gc);
      std::vector<float> bias_host(static_cast<size_t>(gc.n));
      for (size_t i = 0; i < bias_host.size(); ++i) bias_host[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 4.0f;
      support::DeviceBuffer<float> bias(bias_host.size());
      check_cuda(cudaMemcpy(bias.data(), bias_host.data(), bias_host.size() * sizeof(float), cudaMemcpyHostToDevice),
                 "bias");
      for (const Activation act : acts)
        for (const int w : {8, 40, 64}) {
          const std::string what = gc.describe() + " width " + std::to_string(w) + " activation " + to_string(act);
          SCOPED_TRACE(what);
          const auto fused = [&](uint16_t* c) {
            GemmArgs g = prob.args(c);
            g.bias = bias.data();
            g.bias_type = BiasType::f32;
            g.activation = act;
            return g;
          };
          prob.poison_outputs();
          prob.fill_outputs(Fill::small_int, gc.seed + 3);
          TCGEMM_ASSERT_OK(run_reference(fused(prob.c_ref())), "reference " + what);
          const Plan p = run_gemm(fused(prob.c()), tile(w, 8));
          TCGEMM_ASSERT_OK(p, what);
          EXPECT_EQ(p.config.block_m, 8) << p.kernel;
          expect_identical(compare(dt, prob.download_c(), prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc),
                           what, act == Activation::relu ? 0.3 : 0.5);
        }
    }
}

// Chosen automatically for M <= 8 with A and B K-major (where the M <= 64
// rule's width is one it is built in), and then the same bits as the 64-row
// tile of that width; rows of an M = 8 call equal the first rows of M = 1..7.
TEST_F(DecodeTile, AutomaticForDecodeShapes) {
  uint64_t seed = 93000;
  for (DType dt : {DType::f16, DType::bf16}) {
    const GemmCase gc = make_case(dt, kNT, 8, 4096, 3584, Fill::uniform_pm1, ++seed);
    const std::string what = gc.describe();
    SCOPED_TRACE(what);
    Problem prob(gc);
    prob.poison_outputs();
    const Plan full = run_gemm(prob.args(prob.c()));
    TCGEMM_ASSERT_OK(full, what);
    EXPECT_EQ(full.config.block_m, 8) << full.kernel;
    const std::vector<uint16_t> c8 = prob.download_c();
    // (Correct first: equal bits of two unwritten outputs would prove nothing.)
    TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
    expect_close(compare(dt, c8, prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc), dt, what);
    EXPECT_TRUE(c8 == run_tile(prob, tile(full.config.block_n, 64), 0.0f, what + " block_m 64"))
        << "the automatic decode tile differs from the 64-row tile";
    for (int64_t m = 1; m < 8; ++m) {
      prob.poison_c();
      GemmArgs g = prob.args(prob.c());
      g.m = m;
      const Plan p = run_gemm(g);
      TCGEMM_ASSERT_OK(p, what + " m=" + std::to_string(m));
      EXPECT_EQ(p.config.block_m, 8) << "m=" << m << " ran " << p.kernel;
      const std::vector<uint16_t> cm = prob.download_c();
      int64_t differ = 0, past = 0;
      for (size_t i = 0; i < cm.size(); ++i) {
        if (static_cast<int64_t>(i) < m * gc.ldc) differ += cm[i] != c8[i];
        else past += cm[i] != poison_bits(dt);
      }
      EXPECT_EQ(differ, 0) << "m=" << m << ": rows differ from the m=8 call's";
      EXPECT_EQ(past, 0) << "m=" << m << ": written past row M";
    }
  }
}

// A layout it is not built for, forced: refused, saying why (nothing written).
TEST_F(DecodeTile, RefusedForOtherLayouts) {
  for (const Layout& layout : {kLayouts[0], kLayouts[2], kLayouts[3]}) {
    const GemmCase gc = make_case(DType::f16, layout, 4, 256, 256, Fill::uniform_pm1, 94000);
    Problem prob(gc);
    prob.poison_outputs();
    const Plan p = run_gemm(prob.args(prob.c()), tile(32, 8));
    EXPECT_EQ(p.status, Status::invalid_argument) << gc.describe();
    EXPECT_TRUE(contains(p.reason, "decode tile")) << p.reason;
    const std::vector<uint16_t> c = prob.download_c();
    int64_t written = 0;
    for (uint16_t x : c) written += x != poison_bits(gc.dtype);
    EXPECT_EQ(written, 0) << gc.describe();
  }
}

}  // namespace
}  // namespace tcgemm::test
