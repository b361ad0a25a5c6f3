// The numerics contract (docs/DESIGN.md, "What it computes, and the numerics
// contract"): results are deterministic, independent of M ("batch
// invariant") and of the tile configuration.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "gemm_case.hpp"
#include "support/elementwise.hpp"
#include "support/kernel_variants.hpp"

namespace tcgemm::test {
namespace {

// Bits of the first `rows` rows (n columns) of two C images.
int64_t count_row_mismatches(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y, int64_t rows, int64_t n,
                             int64_t ldc, std::string* first) {
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const size_t i = static_cast<size_t>(r * ldc + c);
      if (x[i] != y[i] && bad++ == 0)
        *first = "C[" + std::to_string(r) + "," + std::to_string(c) + "]: " + std::to_string(x[i]) + " vs " +
                 std::to_string(y[i]);
    }
  return bad;
}

class Invariance : public GpuTest {};

TEST_F(Invariance, SameBitsTwice) {
  uint64_t seed = 10000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16}) {
      const GemmCase gc = make_case(dt, layout, 1000, 1000, 1000, Fill::uniform_pm1, ++seed);
      const std::string what = gc.describe();
      SCOPED_TRACE(what);
      Problem prob(gc);
      TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
      const Plan first = run_gemm(prob.args(prob.c()));
      TCGEMM_ASSERT_OK(first, what);
      EXPECT_EQ(first.backend, own_backend()) << first.reason;
      const std::vector<uint16_t> run1 = prob.download_c();
      // Correct, so that two identical wrong answers (e.g. untouched poison) cannot pass.
      expect_close(compare(dt, run1, prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc), dt, what);
      prob.poison_c();
      TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c())), what);
      EXPECT_TRUE(run1 == prob.download_c()) << "two runs differ: " << what;
    }
}

// A call bounded to fewer SMs (Options::sm_count) walks the same tiles on a
// smaller grid and may choose another tile for it: the same bits, in every
// layout, down to one SM.
TEST_F(Invariance, SmCountDoesNotChangeBits) {
  uint64_t seed = 10500;
  for (const Layout& layout : kLayouts)
    for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1000, 1000, 1000}, {64, 4096, 512}}) {
      const GemmCase gc = make_case(DType::bf16, layout, m, n, k, Fill::uniform_pm1, ++seed);
      const std::string what = gc.describe();
      SCOPED_TRACE(what);
      Problem prob(gc);
      const Plan all = run_gemm(prob.args(prob.c()));
      TCGEMM_ASSERT_OK(all, what);
      const std::vector<uint16_t> want = prob.download_c();
      // Correct, so that two identical wrong answers (e.g. untouched poison) cannot pass.
      TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
      expect_close(compare(gc.dtype, want, prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc), gc.dtype,
                   what);
      for (const int sms : {1, 2, 7, 66, 131, 10000}) {
        prob.poison_c();
        Options bounded;
        bounded.sm_count = sms;
        const Plan got = run_gemm(prob.args(prob.c()), bounded);
        TCGEMM_ASSERT_OK(got, what);
        EXPECT_EQ(got.backend, own_backend()) << got.reason;
        // The bound took effect (else every pass would repeat the unbounded launch).
        EXPECT_GT(got.grid_ctas, 0) << got.kernel;
        if (sms < 10000) {
          EXPECT_LE(got.grid_ctas, sms) << got.kernel << " on " << sms << " SMs";
        }
        EXPECT_TRUE(want == prob.download_c()) << what << " on " << sms << " SMs (" << got.kernel << " vs "
                                               << all.kernel << ")";
      }
    }
}

// Rows of C do not depend on how many other rows are computed: the first
// rows of an M = 1000 product equal an M = 77, 129, 200 or 256 product bit
// for bit (whole tiles, and a last tile cut at M: other tiles, the swapped
// kernel's among them). The two calls read the same A buffer (for op_a = T
// the first columns of K x M).
TEST_F(Invariance, RowsDoNotDependOnM) {
  uint64_t seed = 11000;
  constexpr int64_t kLargeM = 1000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16}) {
      const GemmCase large = make_case(dt, layout, kLargeM, 768, 1000, Fill::uniform_pm1, ++seed);
      SCOPED_TRACE(large.describe());
      Problem prob(large);
      TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + large.describe());
      const Plan big = run_gemm(prob.args(prob.c()));
      TCGEMM_ASSERT_OK(big, large.describe());
      EXPECT_EQ(big.backend, own_backend()) << big.reason;
      const std::vector<uint16_t> c_large = prob.download_c();
      expect_close(compare(dt, c_large, prob.download_ref(), poison_bits(dt), large.m, large.n, large.ldc), dt,
                   large.describe());
      for (const int64_t small_m : {77, 129, 200, 256}) {
        const std::string what = large.describe() + " vs m=" + std::to_string(small_m);
        prob.poison_c();
        GemmArgs small = prob.args(prob.c());
        small.m = small_m;
        const Plan sm = run_gemm(small);
        TCGEMM_ASSERT_OK(sm, what);
        EXPECT_EQ(sm.backend, own_backend()) << sm.reason;
        const std::vector<uint16_t> c_small = prob.download_c();
        std::string first;
        EXPECT_EQ(count_row_mismatches(c_large, c_small, small_m, large.n, large.ldc, &first), 0)
            << what << ": rows depend on M: " << first << " (kernels " << big.kernel << " / " << sm.kernel << ")";
        // And the smaller call wrote nothing past its last row.
        int64_t past = 0;
        for (size_t i = static_cast<size_t>(small_m * large.ldc); i < c_small.size(); ++i)
          past += c_small[i] != poison_bits(dt);
        EXPECT_EQ(past, 0) << what << ": the smaller call wrote rows past M";
      }
    }
}

// The decoding path and the prefill path of a layer agree exactly: the rows
// of an M = 1..64 call (64-row tiles, A's box cut to M, C stored from
// registers; 8-row tiles at M <= 8 in the nn.Linear layout) equal the same rows of an M = 1000 call (128-row tiles), in
// every layout (the nn.Linear one, op_b = T, gets the narrow widths), with
// K tails and N edges, and nothing past row M is written.
TEST_F(Invariance, DecodeRowsEqualPrefillRows) {
  if (own_backend() != Backend::sm90) GTEST_SKIP() << "the 64-row tiles are sm90's";
  uint64_t seed = 11500;
  constexpr int64_t kLargeM = 1000;
  for (const Layout& layout : kLayouts)
    for (DType dt : {DType::f16, DType::bf16}) {
      const GemmCase large = make_case(dt, layout, kLargeM, 4104, 1000, Fill::uniform_pm1, ++seed);
      SCOPED_TRACE(large.describe());
      Problem prob(large);
      const Plan big = run_gemm(prob.args(prob.c()));
      TCGEMM_ASSERT_OK(big, large.describe());
      ASSERT_EQ(big.config.block_m, 128) << big.kernel;
      const std::vector<uint16_t> c_large = prob.download_c();
      // (Correct first: equal rows of two unwritten outputs would prove nothing.)
      TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + large.describe());
      expect_close(compare(dt, c_large, prob.download_ref(), poison_bits(dt), large.m, large.n, large.ldc), dt,
                   large.describe());
      for (const int64_t m : {1, 2, 3, 8, 13, 16, 33, 64}) {
        prob.poison_c();
        GemmArgs small = prob.args(prob.c());
        small.m = m;
        const Plan sm = run_gemm(small);
        TCGEMM_ASSERT_OK(sm, "m=" + std::to_string(m));
        // (M <= 8 with A and B K-major: the 8-row decode tile, same bits.)
        const bool decode = m <= 8 && layout.a == Op::N && layout.b == Op::T;
        EXPECT_TRUE(sm.config.block_m == 64 || (decode && sm.config.block_m == 8))
            << "m=" << m << " ran " << sm.kernel;
        const std::vector<uint16_t> c_small = prob.download_c();
        std::string first;
        EXPECT_EQ(count_row_mismatches(c_large, c_small, m, large.n, large.ldc, &first), 0)
            << "m=" << m << ": decode rows differ from prefill rows: " << first << " (kernels " << big.kernel << " / "
            << sm.kernel << ")";
        int64_t past = 0;
        for (size_t i = static_cast<size_t>(m * large.ldc); i < c_small.size(); ++i)
          past += c_small[i] != poison_bits(dt);
        EXPECT_EQ(past, 0) << "the m=" << m << " call wrote rows past M";
      }
    }
}

// BLOCK_N = 128 and BLOCK_N = 256 give the same bits: each output element is
// the same K-ordered fp32 sum whatever the tile.
TEST_F(Invariance, TileWidthDoesNotChangeBits) {
  struct Shape {
    int64_t m, n, k;
  };
  uint64_t seed = 12000;
  // 1024x4096x1024: ~2 tiles per CTA for every width and more k-blocks than
  // ring stages, so a ping-pong consumer's second tile starts several ring
  // fills after its first (the hand-over between consumers is exercised).
  for (const Shape& s : {Shape{384, 640, 512}, Shape{1000, 1000, 1000}, Shape{129, 257, 65}, Shape{1024, 4096, 1024}})
    for (const Layout& layout : kLayouts)
      for (DType dt : {DType::f16, DType::bf16}) {
        const GemmCase gc = make_case(dt, layout, s.m, s.n, s.k, Fill::uniform_pm1, ++seed);
        const std::string what = gc.describe();
        SCOPED_TRACE(what);
        Problem prob(gc);
        TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
        // Every built-in configuration (tile width x cluster) must give the
        // same bits: the K order of the sums does not depend on the tile.
        std::vector<std::vector<uint16_t>> results;
        std::vector<std::string> kernels;
        for (const support::KernelVariant& v : support::builtin_variants(own_backend())) {
          if (!v.builds(gc.op_a, gc.op_b)) continue;
          const std::string cfg = " " + v.label;
          prob.poison_c();
          const Plan p = run_gemm(prob.args(prob.c()), v.options);
          TCGEMM_ASSERT_OK(p, what + cfg);
          // The override really took effect: the kernel names its tile, cluster and schedule, and the
          // plan's configuration is the one forced.
          expect_ran(p, v, what);
          if (own_backend() == Backend::sm90) {
            EXPECT_EQ(p.config.cluster_m, v.options.cluster_m) << p.kernel << cfg;
            EXPECT_EQ(p.config.cluster_n, v.options.cluster_n) << p.kernel << cfg;
            EXPECT_EQ(p.config.pingpong, v.options.pingpong) << p.kernel << cfg;
            EXPECT_EQ(p.config.block_m, v.options.block_m) << p.kernel << cfg;
          } else {
            EXPECT_EQ(p.config.schedule, v.options.schedule) << p.kernel << cfg;
          }
          kernels.push_back(p.kernel);
          results.push_back(prob.download_c());
          if (results.size() == 1)
            expect_close(compare(dt, results[0], prob.download_ref(), poison_bits(dt), gc.m, gc.n, gc.ldc), dt,
                         what + cfg);
          else
            EXPECT_TRUE(results.back() == results[0]) << kernels.back() << " differs from " << kernels[0];
        }
      }
}

// The tall tile (256 rows, two m64 accumulators per consumer) leaves out the
// wgmmas of an accumulator whose rows all lie past M: consumer 1's second at
// 129-192 rows of a block-row, all of consumer 1's at 1-128, consumer 0's
// second as well at 1-64. At token counts on both sides of each of those
// edges, in both layouts of A and with a fused epilogue, its rows are the
// 128-row tile's bit for bit and nothing past M is written.
TEST_F(Invariance, TallTileLeavesOutOnlyRowsPastM) {
  if (own_backend() != Backend::sm90) GTEST_SKIP() << "the tall tile is an sm90 configuration";
  uint64_t seed = 13000;
  for (const Layout& layout : {kLayouts[1], kLayouts[2]})
    for (const int64_t m : {1, 64, 65, 128, 129, 136, 192, 193, 256, 257, 300, 320, 321, 384, 385, 449, 512}) {
      const GemmCase gc = make_case(DType::bf16, layout, m, 224, 200, Fill::uniform_pm1, ++seed);
      const std::string what = gc.describe();
      SCOPED_TRACE(what);
      Problem prob(gc);
      for (const bool fused : {false, true}) {
        GemmArgs args = prob.args(prob.c_ref());
        if (fused) args.activation = Activation::gelu_tanh;
        Options o128;
        o128.prefer = Prefer::tcgemm_only;
        o128.block_m = 128;
        o128.block_n = 112;
        Options tall = o128;
        tall.block_m = 256;
        prob.poison_outputs();
        const Plan p128 = run_gemm(args, o128);
        TCGEMM_ASSERT_OK(p128, what);
        // ... right, too: the two could share an error (the fused epilogue, the last panel of 112 columns).
        const support::ElementwiseStats st = support::check_elementwise(args, nullptr);
        EXPECT_EQ(st.nonfinite, 0) << what;
        EXPECT_EQ(st.beyond, 0) << what << (fused ? " gelu_tanh" : "") << ": " << st.first.str();
        args.c = prob.c();
        const Plan p = run_gemm(args, tall);
        TCGEMM_ASSERT_OK(p, what);
        EXPECT_EQ(p.config.block_m, 256) << p.kernel;
        EXPECT_EQ(p128.config.block_m, 128) << p128.kernel;
        expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n,
                                 gc.ldc),
                         what + (fused ? " gelu_tanh" : ""), fused ? 0.3 : 0.5);
      }
    }
}

// The swapped kernel (Options::swap_ab) computes C^T and stores it
// transposed, with B stored K-major (op_b = T) or K x N (op_b = N: its A
// operand MN-major). At token counts on both sides of its widths (144-224; those
// 8 past a multiple of 16, 152 and 200, end in an 8-row group) and of its
// 64-row panels, with N ragged against its 128-column tiles and
// not a multiple of 64, plain, with alpha and beta (C read back through its
// map) and with a fused bias and activation: every element is the unswapped
// 128 x 128 tile's bit for bit, within the element-wise bound, and nothing
// past M or N is written.
TEST_F(Invariance, SwappedKernelMatchesTheUnswappedTiles) {
  const Backend family = own_backend();
  if (family != Backend::sm90 && family != Backend::sm100)
    GTEST_SKIP() << "the swapped tiles are sm90 and sm100 configurations";
  uint64_t seed = 14000;
  support::DeviceBuffer<float> bias(1000);
  {
    std::vector<float> host(1000);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int>(i % 7) - 3) / 4.0f;
    check_cuda(cudaMemcpy(bias.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "bias");
  }
  // Width 0: the narrowest that holds M (swap_width), the widest past 224 (300: two tiles of 224); 300 also in
  // two tiles of 152, the second of which ends in the 8-row group (as 136 does). Where the last token tile holds fewer
  // tokens than its width (1-129, 520 in three of 176, 513 and 540 in four of 144) its box of the tokens is
  // cut to them, rounded up to 8. Height 256: the tall swapped tiles, whose
  // second consumer holds no rows of C at N = 300 (its first consumer one accumulator's worth).
  // 2100-2900 tokens: 12-16 token tiles, as mid-size products take them (select_config); 392 in two of 200, as
  // 385-400 rows of a wide B take them.
  struct Tokens {
    int64_t m;
    int width;
    int height = 128;
  };
  const std::vector<Tokens> sm90_tokens = {
      Tokens{1, 0},         Tokens{8, 0},         Tokens{63, 0},        Tokens{64, 0},         Tokens{65, 0},
      Tokens{129, 0},       Tokens{136, 0},       Tokens{144, 0},       Tokens{145, 0},        Tokens{152, 0},
      Tokens{153, 0},       Tokens{160, 0},       Tokens{161, 0},       Tokens{176, 0},        Tokens{199, 0},
      Tokens{200, 0},       Tokens{208, 0},       Tokens{209, 0},       Tokens{224, 0},        Tokens{300, 0},
      Tokens{300, 152},     Tokens{1, 0, 256},    Tokens{136, 0, 256},  Tokens{144, 144, 256}, Tokens{150, 0, 256},
      Tokens{160, 160, 256}, Tokens{300, 152, 256}, Tokens{320, 160, 256}, Tokens{520, 176},   Tokens{560, 144, 256},
      Tokens{513, 144},     Tokens{540, 144},     Tokens{136, 136},     Tokens{260, 136, 256}, Tokens{530, 136},
      Tokens{2100, 136, 256}, Tokens{2200, 144, 256}, Tokens{2900, 200}, Tokens{2400, 224}, Tokens{392, 200}};
  // sm100's swapped tiles: 128 rows, 144-224 wide (a tcgen05 N in steps of
  // 16), each epilogue thread storing one of C's columns down the tile's
  // rows, two columns a store (the odd lane's row one below the even's):
  // odd token counts leave a last row alone, 1000 columns a last warp
  // partly past N.
  const std::vector<Tokens> sm100_tokens = {
      Tokens{1, 0},     Tokens{8, 0},     Tokens{65, 0},    Tokens{129, 0},   Tokens{144, 0},   Tokens{145, 0},
      Tokens{161, 0},   Tokens{176, 176}, Tokens{199, 208}, Tokens{224, 224}, Tokens{225, 0},   Tokens{300, 144},
      Tokens{513, 160}, Tokens{520, 176}, Tokens{700, 208}, Tokens{150, 224}};
  for (const Tokens t : family == Backend::sm90 ? sm90_tokens : sm100_tokens)
    for (const int64_t n : {200, 300, 1000})
    for (const Layout layout : {kLayouts[1], kLayouts[0]}) {  // nn.Linear's NT, and B stored K x N (NN)
      const int64_t m = t.m;
      GemmCase gc = make_case(m % 2 ? DType::bf16 : DType::f16, layout, m, n, 136, Fill::uniform_pm1, ++seed);
      for (const int variant : {0, 1, 2}) {  // plain; alpha and beta; bias + gelu_tanh
        gc.alpha = variant == 1 ? 0.5f : 1.0f;
        gc.beta = variant == 1 ? 0.75f : 0.0f;
        const std::string what = gc.describe() + (variant == 2 ? " bias=f32 gelu_tanh" : "") +
                                 (t.width != 0 ? " width " + std::to_string(t.width) : "") +
                                 " height " + std::to_string(t.height);
        SCOPED_TRACE(what);
        Problem prob(gc);
        if (gc.beta != 0.0f) prob.fill_outputs(Fill::uniform_pm1, seed + 100);
        else prob.poison_outputs();
        GemmArgs args = prob.args(prob.c_ref());
        if (variant == 2) {
          args.bias = bias.data();
          args.bias_type = BiasType::f32;
          args.activation = Activation::gelu_tanh;
        }
        Options unswapped;
        unswapped.prefer = Prefer::tcgemm_only;
        unswapped.block_n = 128;
        unswapped.block_m = 128;
        Options swapped;
        swapped.prefer = Prefer::tcgemm_only;
        swapped.swap_ab = true;
        swapped.block_n = t.width;
        swapped.block_m = t.height;
        const Plan p128 = run_gemm(args, unswapped);
        TCGEMM_ASSERT_OK(p128, what);
        args.c = prob.c();
        const Plan p = run_gemm(args, swapped);
        TCGEMM_ASSERT_OK(p, what);
        EXPECT_TRUE(p.config.swap_ab) << p.kernel;
        if (t.width != 0) {
          EXPECT_EQ(p.config.block_n, t.width) << p.kernel;
        } else {  // (swap_width's choice: one of the swapped widths)
          EXPECT_GE(p.config.block_n, 136) << p.kernel;
          EXPECT_LE(p.config.block_n, 224) << p.kernel;
        }
        EXPECT_EQ(p.config.block_m, t.height) << p.kernel;
        EXPECT_FALSE(p128.config.swap_ab) << p128.kernel;
        expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n,
                                 gc.ldc),
                         what, variant == 2 ? 0.3 : 0.5);
        // Within the element-wise bound, the fused epilogue too (both sides could share its error).
        const support::ElementwiseStats st = support::check_elementwise(args, gc.beta != 0.0f ? prob.c0() : nullptr);
        EXPECT_EQ(st.nonfinite, 0) << what;
        EXPECT_EQ(st.beyond, 0) << what << ": " << st.first.str();
      }
    }
}

}  // namespace
}  // namespace tcgemm::test
