// select_config and the shared-memory budget of the sm90 kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sm90/sm90_config.hpp"

namespace tcgemm::sm90 {
namespace {

// Hopper's opt-in per-block shared memory, written out independently of the
// library's constant so that an inflated kSmemLimit cannot pass.
constexpr int kHopperSmemOptIn = 232448;  // 227 KiB

std::string shape(int64_t m, int64_t n, int64_t k, int sms) {
  std::ostringstream s;
  s << "m=" << m << " n=" << n << " k=" << k << " num_sms=" << sms;
  return s.str();
}

// A shape and the tile width the choice should give it.
struct Pick {
  int64_t m, n, k;
  int block_n;
};

struct Shape {
  int64_t m, n, k;
};
const Shape kShapes[] = {{1, 1, 1},          {17, 24, 40},      {128, 128, 64},      {129, 257, 65},
                         {256, 512, 128},    {2048, 4096, 128}, {512, 4096, 4096},   {4096, 5120, 4096},
                         {8192, 8192, 8192}, {128, 16896, 512}, {16384, 8192, 1024}, {100000, 64, 64}};

TEST(Sm90Config, ConstantsMatchTheDesign) {
  EXPECT_EQ(kBlockM, 128);
  EXPECT_EQ(kBlockK, 64);
  EXPECT_EQ(kBlockK * 2, 128) << "BLOCK_K of 16-bit elements must fill one 128-byte swizzle row";
  EXPECT_EQ(kThreads, 384);
  EXPECT_EQ(kSmemLimit, kHopperSmemOptIn);
  EXPECT_EQ(stage_bytes(256), (128 + 256) * 64 * 2);
  EXPECT_EQ(stage_bytes(128), (128 + 128) * 64 * 2);
  // The decode tile: 8 rows, 4 k-blocks a stage (A 1 KiB and B 64 x width each).
  EXPECT_EQ(kDecodeBlockM, 8);
  EXPECT_EQ(stage_k_blocks(kDecodeBlockM), 4);
  EXPECT_EQ(stage_k_blocks(kSmallBlockM), 1);
  EXPECT_EQ(stage_k_blocks(kBlockM), 1);
  EXPECT_EQ(stage_block_k(kDecodeBlockM), 256);
  EXPECT_EQ(stage_bytes(32, 8), 4 * (1024 + 32 * 128));
  EXPECT_EQ(stage_bytes(64, 8), 4 * (1024 + 64 * 128));
  // One consumer warpgroup for the 64- and 8-row tiles, two for 128 and 256
  // rows (the tall tile: 128 rows, two m64 accumulators, each).
  EXPECT_EQ(consumers_for(128), 2);
  EXPECT_EQ(consumers_for(256), 2);
  EXPECT_EQ(consumers_for(64), 1);
  EXPECT_EQ(consumers_for(8), 1);
  EXPECT_EQ(threads_for(8), 256);
  EXPECT_EQ(threads_for(256), 384);
  EXPECT_EQ(mma_rows_for(256, false), 2);
  EXPECT_EQ(mma_rows_for(128, false), 1);
  EXPECT_EQ(mma_rows_for(128, true), 2);
  EXPECT_EQ(stage_bytes(112, 256), (256 + 112) * 64 * 2);
  // The tall tiles' rings: 4 stages of 40-48 KiB beside the panels.
  for (int w : {64, 96, 112, 128}) EXPECT_EQ(stages_for(w, 256), 4) << w;
  EXPECT_EQ(smem_bytes(128, 4, 256), 1024 + 4 * 49152 + 2 * 2 * 64 * 64 * 2 + 2 * 64 * 4 + (2 * 4 + 4 + 2) * 8 +
                                           24);  // counted tiles' slots: 4 tile indices and a flag
}

TEST(Sm90Config, OverrideIsRespected) {
  for (const auto& s : kShapes)
    for (int sms : {1, 78, 132}) {
      for (int bn : kTileWidths) {
        // (A width built only swapped, 152, 176, 200, 208 or 224, is asked for with swap_ab.)
        const bool swap_only = !is_tile_config(bn, 1, false, kBlockM) && !is_tile_config(bn, 1, false, kSmallBlockM) &&
                               is_swap_width(bn);
        const Config c = select_config(s.m, s.n, s.k, sms, bn, 0, false, 0, 0, swap_only);
        EXPECT_EQ(c.block_n, bn) << shape(s.m, s.n, s.k, sms) << " override=" << bn;
        EXPECT_EQ(c.swap_ab, swap_only) << shape(s.m, s.n, s.k, sms) << " override=" << bn;
        EXPECT_TRUE(is_tile_config(c.block_n, c.cluster_m, c.pingpong, c.block_m, c.cluster_n, c.swap_ab))
            << shape(s.m, s.n, s.k, sms) << " " << describe(c);
      }
      for (TileConfig tc : kTileConfigs) {
        const Config c = select_config(s.m, s.n, s.k, sms, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m,
                                       tc.cluster_n, tc.swap_ab);
        EXPECT_EQ(c.block_m, tc.block_m) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.block_n, tc.block_n) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.cluster_m, tc.cluster_m) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.cluster_n, tc.cluster_n) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.pingpong, tc.pingpong) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.swap_ab, tc.swap_ab) << shape(s.m, s.n, s.k, sms);
      }
    }
}

// Options that name only part of a configuration (a height alone, a width
// alone, a height and a cluster, ...) leave the rest to the choice, which
// must still land on a configuration built for the call's layout: a plan
// that names a kernel the library lacks fails only at launch. (Forcing
// block_m = 256 alone once took a width built only swapped.)
TEST(Sm90Config, PartialOverridesGiveBuiltConfigurations) {
  const Shape shapes[] = {{1, 136, 512},     {1, 4096, 4096},   {64, 14336, 4096}, {136, 14336, 4096},
                          {300, 28672, 2048}, {1000, 1025, 300}, {4096, 17952, 512}, {4096, 4096, 4096}, {1, 16920, 512}};
  std::vector<int> widths = {0};
  for (int w : kTileWidths) widths.push_back(w);
  for (const Shape& s : shapes)
    for (const bool a_k_major : {true, false})
      for (const bool b_k_major : {true, false})
        for (const int block_m : {0, 8, 64, 128, 256})
          for (const int block_n : widths)
            for (const int cluster_m : {0, 1, 2})
              for (const bool pingpong : {false, true})
                for (const bool swap_ab : {false, true}) {
                  ConfigRequest r{block_n, cluster_m, pingpong, block_m, b_k_major};
                  r.a_k_major = a_k_major;
                  r.swap_ab = swap_ab;
                  const Config c = select_config(s.m, s.n, s.k, 132, r);
                  // (The case, written out only for a failure.)
                  const auto what = [&] {
                    return shape(s.m, s.n, s.k, 132) + (a_k_major ? " A K-major" : " A M-major") +
                           (b_k_major ? ", B K-major" : ", B N-major") + ", asked block_m=" + std::to_string(block_m) +
                           " block_n=" + std::to_string(block_n) + " cluster_m=" + std::to_string(cluster_m) +
                           (pingpong ? " pingpong" : "") + (swap_ab ? " swap_ab" : "") + ": " + describe(c);
                  };
                  ASSERT_TRUE(is_tile_config(c.block_n, c.cluster_m, c.pingpong, c.block_m, c.cluster_n, c.swap_ab))
                      << what();
                  ASSERT_TRUE(builds_for_layout(c.block_m, c.block_n, a_k_major, b_k_major, c.swap_ab)) << what();
                }
}

TEST(Sm90Config, InvalidOverrideFallsBackToAutomatic) {
  for (int bad : {0, 24, 80, 512, -1}) {
    const Config c = select_config(4096, 4096, 4096, 132, bad);
    const Config automatic = select_config(4096, 4096, 4096, 132, 0);
    EXPECT_TRUE(is_tile_width(c.block_n)) << "override=" << bad << " gave block_n=" << c.block_n;
    EXPECT_EQ(c.block_n, automatic.block_n) << "override=" << bad;
    EXPECT_EQ(c.cluster_m, automatic.cluster_m) << "override=" << bad;
  }
  // A cluster size the width is not built with falls back to the automatic one.
  const Config c = select_config(4096, 4096, 4096, 132, 64, 2);
  EXPECT_EQ(c.block_n, 64);
  EXPECT_EQ(c.cluster_m, 1);
  const Config n = select_config(4096, 4096, 4096, 132, 256, 0, false, 0, 2);
  EXPECT_EQ(n.block_n, 256);
  EXPECT_EQ(n.cluster_n, 1);
  // A cluster along N with cluster_m left automatic is honoured where built.
  const Config along_n = select_config(1024, 1024, 1024, 132, 64, 0, false, 0, 2);
  EXPECT_EQ(along_n.cluster_m, 1);
  EXPECT_EQ(along_n.cluster_n, 2);
  EXPECT_EQ(along_n.block_m, 128);
}

TEST(Sm90Config, EveryTileConfigIsAnInstantiatedWidth) {
  for (TileConfig tc : kTileConfigs) {
    EXPECT_TRUE(is_tile_width(tc.block_n)) << tc.block_n;
    EXPECT_TRUE(tc.cluster_m == 1 || tc.cluster_m == 2) << tc.cluster_m;
    EXPECT_TRUE(tc.cluster_n == 1 || tc.cluster_n == 2) << tc.cluster_n;
    EXPECT_TRUE(tc.cluster_m == 1 || tc.cluster_n == 1) << "a pair along M or along N";
    EXPECT_TRUE(tc.block_m == 128 || tc.block_m == 64 || tc.block_m == 8 || tc.block_m == 256) << tc.block_m;
    // A 64- or 8-row tile has one consumer, a 256-row one two of 128 rows
    // each: no cluster, no ping-pong.
    if (tc.block_m != 128) {
      EXPECT_EQ(tc.cluster_m, 1);
      EXPECT_EQ(tc.cluster_n, 1);
      EXPECT_FALSE(tc.pingpong);
    }
    // The decode tile: the widths the M <= 64 rule picks up to 64, each also a 64-row tile
    // (the tile it replaces, and the one its bits are compared with).
    if (tc.block_m == 8) {
      EXPECT_LE(tc.block_n, 64) << tc.block_n;
      EXPECT_TRUE(is_tile_config(tc.block_n, 1, false, 64)) << tc.block_n;
    }
    // A cluster splits B into two halves of whole 64-wide panels.
    if (tc.cluster_m == 2) {
      EXPECT_EQ(tc.block_n % 128, 0) << tc.block_n;
    }
    // The tall tile keeps 2 x (block_n / 2) accumulators per thread: at most 128, swapped 160.
    if (tc.block_m == 256) {
      EXPECT_LE(tc.block_n, tc.swap_ab ? 160 : 128) << tc.block_n;
    }
    // Ping-pong keeps 2 x (block_n / 2) accumulators per thread: at most 128.
    if (tc.pingpong) {
      EXPECT_LE(tc.block_n, 128) << tc.block_n;
      EXPECT_EQ(tc.cluster_m, 1);
      EXPECT_EQ(tc.cluster_n, 1);
    }
  }
}

TEST(Sm90Config, PicksPingPongFor8192CubedOnH200) {
  // Every 128- and 256-wide tiling fills the waves equally (97%) here; the
  // ping-pong 128x128 measured best (1.03-1.04x cuBLAS against 1.02-1.03x).
  const Config c = select_config(8192, 8192, 8192, 132);
  EXPECT_EQ(c.block_n, 128) << shape(8192, 8192, 8192, 132);
  EXPECT_TRUE(c.pingpong) << shape(8192, 8192, 8192, 132);
}

TEST(Sm90Config, PicksNarrowTilesWhenWideTilesHalfFillTheWave) {
  // One block-row, N = 132 * 128: 66 wide tiles fill half of 132 SMs, 132
  // narrow tiles fill all of them, which beats the narrow tile's 10% handicap.
  const Config c = select_config(128, 132 * 128, 4096, 132);
  EXPECT_EQ(c.block_n, 128) << shape(128, 132 * 128, 4096, 132);
  // 1024^3: 128x64 tiles are the only ones that fill a wave (128 of 132 SMs).
  EXPECT_EQ(select_config(1024, 1024, 1024, 132).block_n, 64);
}

// Large M with a narrow N (a router or a low-rank projection): every width
// makes one column of tiles, so the wave efficiency ties and the width must
// not be one that mostly computes columns past N (N = 16 at M = 10240 on
// 128x256 tiles measured 2.6x slower than on 128x64, docs/PERF.md).
TEST(Sm90Config, NarrowNDoesNotTakeATileMostlyPastIt) {
  for (const Pick& p : {Pick{10240, 16, 8192, 64}, Pick{16384, 32, 4096, 64}, Pick{32768, 64, 4096, 64},
                        Pick{16384, 128, 4096, 128}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 128) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132);
  }
  // 64 < N <= 128 where the 128-row choice is 64 wide (two columns): 64-row
  // tiles one column wide, as many, each over all of N; 96 wide where that
  // is all of N. M = 8192: 128 tiles either way.
  for (const Pick& p : {Pick{8192, 128, 4096, 128}, Pick{8192, 100, 4096, 128}, Pick{8192, 96, 4096, 96},
                        Pick{8192, 72, 4096, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 64) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.num_ctas, 128) << shape(p.m, p.n, p.k, 132);
  }
  // Not for B stored MN-major (the rule's layout is nn.Linear's).
  EXPECT_EQ(select_config(8192, 128, 4096, 132, ConfigRequest{.b_k_major = false}).block_m, 128);
  // Where the width divides N the share is 1 and nothing changes: a model
  // layer at prefill (M = 4096, N = 4096, K = 14336) keeps its 128x256 tiles.
  EXPECT_EQ(select_config(4096, 4096, 14336, 132).block_n, 256);
}

// M <= 64 (decoding): 64-row tiles, as many as spread N evenly over the SMs
// with enough of B in flight per SM.
TEST(Sm90Config, SmallMTakesSixtyFourRowTilesOverEverySm) {
  // The fewest waves, then the narrower tile. N = 4096: 32, 64 or 128
  // tiles of 128, 64 or 32 (one wave each; 16 would take two): 32. 14336:
  // 112 tiles of 128 (one wave; 96 takes two). 28672: 112 of 256 (one
  // wave). 1024: 128 of 8, one wave. 6144: 128 of 48 (40 takes two).
  // 12288: 128 of 96. 10240: 107 of 96. 4608: 116 of 40. But where 64 wide
  // makes 4 waves or more, the width of 64 or more whose last wave is
  // fullest: 57344 (896 tiles of 64, 97%), 37888 (395 of 96, 99.7%; 64 wide
  // would make 592, 90%).
  // One partial wave that leaves a quarter of the SMs idle or more gives way
  // to the width the streaming model (stream_time) finds over 3% faster:
  // 22016 makes 86 tiles 256 wide, so 230 of 96 on every SM (1.7 waves);
  // 17408 makes 68, so 363 of 48. 28672's 112 tiles of 256 (85%) stay.
  // (M <= 8 with A and B K-major, as here, takes the decode tile of the
  // width where it is built and picked, 48 wide or less: SmallMTakesTheDecodeTile.)
  for (const Pick& p : {Pick{1, 22016, 4096, 96}, Pick{64, 22016, 4096, 96}, Pick{16, 17408, 4096, 48},
                        Pick{1, 4096, 4096, 32}, Pick{1, 14336, 4096, 128}, Pick{16, 4096, 14336, 32},
                        Pick{1, 1024, 4096, 8}, Pick{64, 4096, 4096, 32}, Pick{64, 14336, 4096, 128},
                        Pick{1, 6144, 4096, 48}, Pick{1, 3584, 3584, 32}, Pick{1, 28672, 4096, 256},
                        Pick{8, 10240, 8192, 96}, Pick{1, 12288, 4096, 96}, Pick{32, 4608, 3584, 40}, Pick{1, 57344, 8192, 64}, Pick{64, 37888, 3584, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, p.m <= 8 && p.block_n <= 48 ? 8 : 64) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    EXPECT_FALSE(c.pingpong);
    EXPECT_EQ(c.cluster_m, 1);
  }
  // One block-row (64 < M <= 128) where the 128-row choice is 64 wide: 64-row
  // tiles 128 wide (the same tile count) or 96 wide where they fill more SMs.
  for (const Pick& p : {Pick{128, 8192, 8192, 128}, Pick{128, 8192, 28672, 128}, Pick{128, 6144, 4096, 96},
                        Pick{128, 4608, 3584, 96}, Pick{100, 8192, 8192, 128}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 64) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
  }
  // ... but not where a 128-row width fills the waves: 37888 (264 tiles of
  // 144: two full waves), 57344 (512 of 112, 97%), 12288 (128 of 96), 28672
  // (256 of 112), 10240 (107 of 96).
  for (const Pick& p : {Pick{128, 37888, 3584, 144}, Pick{128, 57344, 8192, 112}, Pick{128, 12288, 4096, 96},
                        Pick{128, 28672, 4096, 112}, Pick{128, 10240, 8192, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 128) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
  }
  // More block-rows, K >= 4096, where the 128-row choice is 64 wide: the
  // 64-row tiles where they fill the SMs as well (within 3%): 1024 x 1024 on
  // 128 tiles of 64x128, 136 x 4096 on 129 of 64x96; not N = 64 (the wider
  // tiles' columns past N wasted).
  for (const Pick& p : {Pick{1024, 1024, 4096, 128}, Pick{136, 4096, 4096, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 64) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
  }
  EXPECT_EQ(select_config(65536, 64, 4096, 132).block_m, 128);
  // Past 64 rows: the 128-row tiles, where they take more than half the SMs.
  EXPECT_EQ(select_config(65, 16384, 4096, 132).block_m, 128);
  EXPECT_EQ(select_config(1024, 1024, 1024, 132).block_m, 128) << "128 tiles of 128x64";
  // Where they would leave half the SMs or more idle, 64-row tiles at the
  // M <= 64 rule's width (matmul_v2's small squares, B MN-major: the fewest
  // waves, then the narrowest: 16 CTAs of 64x16, 64 of 64x16, 128 of 64x32).
  ConfigRequest nn;
  nn.b_k_major = false;
  for (const Pick& p : {Pick{128, 128, 128, 16}, Pick{256, 256, 256, 16}, Pick{512, 512, 512, 32}}) {
    const Config sq = select_config(p.m, p.n, p.k, 132, nn);
    EXPECT_EQ(sq.block_m, 64) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(sq.block_n, p.block_n) << shape(p.m, p.n, p.k, 132);
  }
  // Never the widths between whole panels under half a wave of tiles: 128^3
  // is not two tiles of 128x112.
  EXPECT_EQ(select_config(128, 128, 128, 132).block_m, 64);
  // Where they fill the last wave: M = 512 (four block-rows) and N = 4608,
  // 3584, 10240 (B K-major; B MN-major: MnMajorBAvoidsSixteenColumnPanels);
  // 1024 x 1536 (B MN-major: three 32-wide panels).
  for (const Pick& p : {Pick{512, 4608, 3584, 144}, Pick{512, 3584, 3584, 112}, Pick{512, 10240, 8192, 160},
                        Pick{512, 3584, 18944, 112}, Pick{1024, 1536, 1024, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132, p.block_n == 96 ? nn : ConfigRequest{});
    EXPECT_EQ(c.block_m, 128) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
  }
  // ... also against the ping-pong 128x128 where that leaves the last wave
  // emptier: 512 x 22016 in 6 full waves of 128x112 (788 tiles), not 5.2 of
  // 128x128 (1.07x faster, `--configs all`); at 28672 and 12288 the
  // ping-pong tiles fill their waves (97%) and stay.
  const Config fill = select_config(512, 22016, 4096, 132);
  EXPECT_EQ(fill.block_n, 112) << describe(fill);
  EXPECT_FALSE(fill.pingpong);
  for (const int64_t n : {28672, 12288}) {
    const Config pp = select_config(512, n, 4096, 132);
    EXPECT_EQ(pp.block_n, 128) << n;
    EXPECT_TRUE(pp.pingpong) << n;
  }
  // ... unless a height or width was asked for.
  nn.block_n = 64;
  EXPECT_EQ(select_config(512, 512, 512, 132, nn).block_m, 128);
  // B stored MN-major, streamed (M <= 64): whole 64-wide panels only (the
  // narrower ones stream B more slowly), though 16, 32, 48 and 96 are built.
  ConfigRequest mn;
  mn.b_k_major = false;
  const Config c = select_config(1, 4096, 4096, 132, mn);
  EXPECT_EQ(c.block_m, 64);
  EXPECT_EQ(c.block_n, 64);
  EXPECT_EQ(select_config(1, 4608, 4096, 132, mn).block_n, 64) << "40 or 48 with B K-major";
  EXPECT_EQ(select_config(1, 4608, 4096, 132).block_n, 40);
  // ... but asked for by name, they run.
  mn.block_n = 48;
  EXPECT_EQ(select_config(1, 4096, 4096, 132, mn).block_n, 48);
  // A forced width not built for MN-major B (refused by dispatch) still gives a built configuration.
  mn.block_n = 8;
  EXPECT_EQ(select_config(1, 4096, 4096, 132, mn).block_n, 64);
  // A 128-row option (a cluster, ping-pong) keeps 128-row tiles at small M.
  EXPECT_EQ(select_config(8, 4096, 4096, 132, 128, 2).block_m, 128);
  EXPECT_EQ(select_config(8, 4096, 4096, 132, 128, 1, true).block_m, 128);
  // ... and so does asking for them.
  EXPECT_EQ(select_config(8, 4096, 4096, 132, 0, 0, false, 128).block_m, 128);
  // A width only 64-row tiles have implies them at any M.
  EXPECT_EQ(select_config(4096, 4096, 4096, 132, 16).block_m, 64);
}

// Small problems with K of at most kShallowStages k-blocks: the narrow
// 64-row tiles with the 4-stage ring (the deep one is never filled).
TEST(Sm90Config, ShallowRingForSmallProblemsWithShortK) {
  ConfigRequest nn;
  nn.b_k_major = false;
  for (const int64_t s : {128, 256}) {
    const Config c = select_config(s, s, s, 132, nn);
    EXPECT_EQ(c.block_m, 64) << s;
    EXPECT_EQ(c.block_n, 16) << s;
    EXPECT_EQ(c.stages, kShallowStages) << s;
  }
  EXPECT_EQ(select_config(128, 128, 128, 132).stages, kShallowStages) << "64x8, B K-major";
  // K past 4 k-blocks, or a fused epilogue (the shallow ring is built for
  // the plain one only): the deep ring.
  EXPECT_EQ(select_config(128, 128, 320, 132, nn).stages, stages_for(16, 64));
  EXPECT_EQ(select_config(512, 512, 512, 132, nn).stages, stages_for(32, 64));
  ConfigRequest fused = nn;
  fused.fused = true;
  EXPECT_EQ(select_config(128, 128, 128, 132, fused).stages, stages_for(16, 64));
  // Decoding (M <= 64 by its own rule) and forced widths keep the deep ring.
  EXPECT_EQ(select_config(64, 4096, 128, 132).stages, stages_for(select_config(64, 4096, 128, 132).block_n, 64));
  EXPECT_EQ(select_config(128, 128, 128, 132, 16, 0, false, 64).stages, stages_for(16, 64));
}

TEST(Sm90Config, ClustersOnlyWhenAsked) {
  // Measured no faster on the H200 (docs/PERF.md), so never automatic...
  for (const auto& s : kShapes) {
    EXPECT_EQ(select_config(s.m, s.n, s.k, 132).cluster_m, 1) << shape(s.m, s.n, s.k, 132);
    EXPECT_EQ(select_config(s.m, s.n, s.k, 132).cluster_n, 1) << shape(s.m, s.n, s.k, 132);
  }
  EXPECT_EQ(select_config(1024, 1024, 1024, 132).cluster_n, 1);
  EXPECT_EQ(select_config(1024, 1536, 1024, 132).cluster_n, 1);
  // ...but an explicit request for a built configuration is honoured.
  EXPECT_EQ(select_config(8192, 8192, 8192, 132, 256, 2).cluster_m, 2);
  EXPECT_EQ(select_config(8192, 8192, 8192, 132, 128, 2).cluster_m, 2);
  EXPECT_EQ(select_config(1024, 1024, 1024, 132, 64, 0, false, 0, 2).cluster_n, 2);
  EXPECT_EQ(select_config(1024, 1536, 1024, 132, 96, 1, false, 128, 2).cluster_n, 2);
}

TEST(Sm90Config, PingPongAtShortKWithTwoTilesPerCta) {
  // Short K, many tiles: the epilogue is a large share of each tile.
  const Config c = select_config(16384, 8192, 1024, 132);
  EXPECT_TRUE(c.pingpong) << describe(c);
  EXPECT_EQ(c.block_n, 128) << describe(c);
  // Below two 128x128 tiles per CTA a ping-pong consumer would idle.
  EXPECT_FALSE(select_config(1024, 1536, 1024, 132).pingpong);  // 96 tiles
  EXPECT_FALSE(select_config(2048, 2048, 2048, 132).pingpong);  // 256 tiles < 264
  // Explicit requests: honoured where built, else the width's cooperative kernel.
  EXPECT_TRUE(select_config(8192, 8192, 1024, 132, 128, 1, true).pingpong);
  EXPECT_FALSE(select_config(8192, 8192, 1024, 132, 256, 1, true).pingpong);
  EXPECT_FALSE(select_config(8192, 8192, 1024, 132, 128, 0, false).pingpong);
}

TEST(Sm90Config, PersistentGridIsMinOfClustersAndResidentClusters) {
  for (const auto& s : kShapes)
    for (int sms : {1, 78, 114, 132})
      for (TileConfig tc : kTileConfigs) {
        const Config c = select_config(s.m, s.n, s.k, sms, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m,
                                       tc.cluster_n, tc.swap_ab);
        EXPECT_EQ(c.swap_ab, tc.swap_ab) << shape(s.m, s.n, s.k, sms);
        // (The swapped kernel's tiles: block_m of N by block_n of M.)
        const int64_t rows = c.swap_ab ? s.n : s.m, cols = c.swap_ab ? s.m : s.n;
        const int64_t m_blocks = (rows + c.block_m - 1) / c.block_m;
        const int64_t n_blocks = (cols + c.block_n - 1) / c.block_n;
        const int64_t clusters =
            (m_blocks + c.cluster_m - 1) / c.cluster_m * ((n_blocks + c.cluster_n - 1) / c.cluster_n);
        const int size = c.cluster_m * c.cluster_n;
        const int64_t resident = sms / size > 0 ? sms / size : 1;
        const int64_t full = (clusters < resident ? clusters : resident) * size;
        if (c.num_ctas != full) {
          // (A tall tile's grid a CTA or two short, prime to the block-rows, where
          // the last block-row is light: Sm90Config.TallGridRotatesTheBlockRowsWhereTheLastIsLight.)
          EXPECT_EQ(c.block_m, 256) << shape(s.m, s.n, s.k, sms) << " " << describe(c);
          EXPECT_GE(c.num_ctas, full - 2) << shape(s.m, s.n, s.k, sms) << " " << describe(c);
          EXPECT_EQ(std::gcd(static_cast<int64_t>(c.num_ctas), m_blocks), 1) << shape(s.m, s.n, s.k, sms);
        }
        EXPECT_LE(c.num_ctas, full) << shape(s.m, s.n, s.k, sms) << " " << describe(c);
        EXPECT_GE(c.num_ctas, size) << shape(s.m, s.n, s.k, sms);
        EXPECT_EQ(c.num_ctas % size, 0) << shape(s.m, s.n, s.k, sms);
      }
}

// A strided batch bound by its stores of C (K <= 256, each problem's B at
// most 8 MiB) walks each problem row-major: raster groups of one block-row.
// Single products, longer K, a larger B, the tall and swapped tiles keep
// groups of 8 block-rows.
TEST(Sm90Config, StoreBoundBatchesWalkRowMajor) {
  const auto pick = [](int64_t m, int64_t n, int64_t k, ConfigRequest r) { return select_config(m, n, k, 132, r); };
  for (const bool b_k_major : {true, false}) {
    const Config c = pick(2048, 2048, 128, {.b_k_major = b_k_major, .batch = 128});
    EXPECT_EQ(c.block_m, 128) << describe(c);
    EXPECT_EQ(c.group_m, 1) << "B K-major " << b_k_major;
    EXPECT_EQ(pick(2048, 2048, 128, {.b_k_major = b_k_major, .batch = 1}).group_m, 8) << "a single product";
  }
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 32}).group_m, 1);
  EXPECT_EQ(pick(512, 512, 128, {.batch = 128}).group_m, 1);
  EXPECT_EQ(pick(2048, 16384, 256, {.batch = 8}).group_m, 1) << "B of 8 MiB";
  EXPECT_EQ(pick(2048, 16392, 256, {.batch = 8}).group_m, 8) << "B past 8 MiB";
  EXPECT_EQ(pick(2048, 2048, 264, {.batch = 128}).group_m, 8) << "K past 256";
  // A cluster along M (128 x 256 in pairs): one cluster block-row a group.
  const Config pairs = pick(2048, 2048, 128, {.block_n = 256, .cluster_m = 2, .batch = 128});
  EXPECT_EQ(pairs.cluster_m, 2) << describe(pairs);
  EXPECT_EQ(pairs.group_m, 1);
  // The tall tile and the swapped kernel, forced: groups of 8 block-rows.
  const Config tall = pick(2048, 2048, 128, {.block_m = 256, .batch = 128});
  EXPECT_EQ(tall.block_m, 256) << describe(tall);
  EXPECT_EQ(tall.group_m, 8);
  const Config swapped = pick(256, 2048, 128, {.batch = 128, .swap_ab = true});
  EXPECT_TRUE(swapped.swap_ab) << describe(swapped);
  EXPECT_EQ(swapped.group_m, 8);
}

// Counted tiles (Schedule::counted): automatic for the store-bound batches
// on the tiles that can count, on a GPU with an H100's L2 (50 MiB), not an
// H200's (60 MiB) or an unknown one; forced on any such tile; never on a
// cluster, the tall, swapped, 64- or 8-row tiles; off when the request says
// persistent.
TEST(Sm90Config, CountedTilesWhereTheyCan) {
  constexpr int64_t kH100L2 = int64_t{50} << 20, kH200L2 = int64_t{60} << 20;
  const auto pick = [](int64_t m, int64_t n, int64_t k, ConfigRequest r) { return select_config(m, n, k, 132, r); };
  const Config batch = pick(2048, 2048, 128, {.batch = 128, .l2_bytes = kH100L2});
  EXPECT_EQ(batch.schedule, Schedule::counted) << describe(batch);
  EXPECT_NE(describe(batch).find("counted tiles"), std::string::npos) << describe(batch);
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 128, .l2_bytes = kH200L2}).schedule, Schedule::persistent) << "60 MiB";
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 128}).schedule, Schedule::persistent) << "L2 not known";
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 128, .schedule = Schedule::counted, .l2_bytes = kH200L2}).schedule,
            Schedule::counted)
      << "forced on any L2";
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 128, .schedule = Schedule::persistent, .l2_bytes = kH100L2}).schedule,
            Schedule::persistent);
  EXPECT_EQ(pick(2048, 2048, 128, {.batch = 1, .l2_bytes = kH100L2}).schedule, Schedule::persistent)
      << "a single product";
  EXPECT_EQ(pick(2048, 2048, 264, {.batch = 128, .l2_bytes = kH100L2}).schedule, Schedule::persistent) << "K past 256";
  EXPECT_EQ(pick(1024, 1024, 128, {.batch = 128, .l2_bytes = kH100L2}).schedule, Schedule::counted) << "62 tiles an SM";
  EXPECT_EQ(pick(512, 512, 128, {.batch = 128, .l2_bytes = kH100L2}).schedule, Schedule::persistent)
      << "15.5 tiles an SM";
  EXPECT_EQ(pick(512, 512, 128, {.batch = 128, .schedule = Schedule::counted}).schedule, Schedule::counted);
  EXPECT_EQ(pick(4096, 4096, 4096, {.schedule = Schedule::counted}).schedule, Schedule::counted) << "forced";
  EXPECT_EQ(pick(4096, 4096, 4096, {.l2_bytes = kH100L2}).schedule, Schedule::persistent);
  EXPECT_EQ(pick(2048, 2048, 128, {.block_n = 256, .cluster_m = 2, .batch = 128, .l2_bytes = kH100L2}).schedule,
            Schedule::persistent)
      << "a cluster";
  EXPECT_EQ(pick(2048, 2048, 128, {.block_m = 256, .batch = 128, .schedule = Schedule::counted}).schedule,
            Schedule::persistent)
      << "the tall tile";
  EXPECT_EQ(pick(256, 2048, 128, {.batch = 128, .swap_ab = true}).schedule, Schedule::persistent) << "swapped";
  EXPECT_EQ(pick(16, 4096, 4096, {.schedule = Schedule::counted}).schedule, Schedule::persistent) << "64-row tiles";
  for (const TileConfig& t : kTileConfigs)
    EXPECT_EQ(counts_tiles(t.block_m, t.cluster_m * t.cluster_n, t.swap_ab, false),
              t.block_m == 128 && t.cluster_m == 1 && t.cluster_n == 1 && !t.swap_ab);
}

// Store-bound batches (K <= 256) whose 128-row tiles, 128 wide or more,
// make at most one tile an SM: 128 x 64, so that a CTA takes two tiles or
// more and the second's loads overlap the first's epilogue. Not past K =
// 256, nor past one tile an SM, nor without a batch, nor for a fused
// epilogue, nor where the call named a tile or schedule; the small
// problems keep their 64-row tiles.
TEST(Sm90Config, NarrowTilesForShortBatchesOfOneTileAnSm) {
  const auto pick = [](int64_t m, int64_t n, int64_t k, ConfigRequest r) { return select_config(m, n, k, 132, r); };
  const auto narrow = [](const Config& c) {
    return c.block_m == 128 && c.block_n == 64 && !c.pingpong && c.cluster_m == 1 && c.cluster_n == 1 && !c.swap_ab;
  };
  for (const bool b_k_major : {true, false}) {
    EXPECT_TRUE(narrow(pick(128, 128, 128, {.b_k_major = b_k_major, .batch = 128}))) << b_k_major;
    EXPECT_TRUE(narrow(pick(128, 128, 256, {.b_k_major = b_k_major, .batch = 128}))) << b_k_major;
    EXPECT_TRUE(narrow(pick(256, 256, 128, {.b_k_major = b_k_major, .batch = 64}))) << b_k_major << ": was 128 x 256";
    EXPECT_TRUE(narrow(pick(512, 512, 128, {.b_k_major = b_k_major, .batch = 16}))) << b_k_major;
    // (N = 128: one column of 128-wide tiles, which the 64-row 64 x 128 takes for single products.)
    EXPECT_TRUE(narrow(pick(128, 128, 128, {.b_k_major = b_k_major, .batch = 64}))) << b_k_major;
  }
  EXPECT_EQ(pick(128, 128, 128, {.batch = 128}).group_m, 1) << "the store-bound batches' raster";
  EXPECT_FALSE(narrow(pick(128, 128, 384, {.batch = 128}))) << "K past 256";
  EXPECT_FALSE(narrow(pick(512, 512, 128, {.batch = 128}))) << "several tiles an SM";
  EXPECT_FALSE(narrow(pick(2048, 1024, 128, {.batch = 1}))) << "a single product";
  EXPECT_FALSE(narrow(pick(128, 128, 128, {.batch = 128, .fused = true}))) << "a fused epilogue";
  EXPECT_FALSE(narrow(pick(128, 128, 128, {.batch = 128, .schedule = Schedule::persistent}))) << "a named schedule";
  EXPECT_EQ(pick(128, 128, 128, {.block_n = 128, .batch = 128}).block_n, 128) << "a named width";
  const Config small = pick(128, 128, 128, {.batch = 32});
  EXPECT_EQ(small.block_m, kSmallBlockM) << describe(small) << ": the small-problem rule's";
  EXPECT_EQ(pick(8192, 128, 4096, {}).block_m, kSmallBlockM) << "N one 128-wide column: 64 x 128";
}

// Large batched problems (K >= 2048, 256 or more 128 x 128 tiles each) on a
// GPU of small L2: 128 x 256 in pairs sharing B instead of the ping-pong
// 128 x 128. Not on a larger L2, nor at K = 1024, nor for fewer tiles a
// problem, nor without a batch, nor where the call named a schedule.
TEST(Sm90Config, PairsForLargeBatchedProblemsOnASmallL2) {
  ConfigRequest r;
  r.batch = 32;
  r.l2_bytes = int64_t{50} << 20;  // an H100's
  for (const bool b_k_major : {true, false}) {
    r.b_k_major = b_k_major;
    const Config c = select_config(2048, 2048, 2048, 132, r);
    EXPECT_EQ(c.block_n, 256) << describe(c);
    EXPECT_EQ(c.cluster_m, 2) << describe(c);
    EXPECT_FALSE(c.pingpong);
    EXPECT_EQ(c.schedule, Schedule::persistent);
    EXPECT_EQ(c.num_ctas % 2, 0) << "whole pairs";
  }
  r.b_k_major = true;
  const auto pingpong = [](const Config& c) { return c.pingpong && c.block_n == 128 && c.cluster_m == 1; };
  EXPECT_EQ(select_config(4096, 4096, 4096, 132, ConfigRequest{.batch = 8, .l2_bytes = r.l2_bytes}).cluster_m, 2);
  ConfigRequest h200 = r;
  h200.l2_bytes = int64_t{60} << 20;
  EXPECT_TRUE(pingpong(select_config(2048, 2048, 2048, 132, h200)));
  EXPECT_TRUE(pingpong(select_config(2048, 2048, 1024, 132, r)));
  EXPECT_TRUE(pingpong(select_config(1536, 1536, 1536, 132, r)));
  ConfigRequest plain = r;
  plain.batch = 1;
  EXPECT_TRUE(pingpong(select_config(4096, 4096, 4096, 132, plain)));
  ConfigRequest named = r;
  named.schedule = Schedule::persistent;
  EXPECT_TRUE(pingpong(select_config(2048, 2048, 2048, 132, named)));
}

// Paired stores (64 x 128 boxes of C): the tiles stored through panels
// whose width is whole pairs and whose consumers have two buffers; never
// the swapped or M-grouped kernels, nor the tiles stored from registers.
TEST(Sm90Config, PanelPairsForWholePairsOfPanels) {
  EXPECT_TRUE(stores_panel_pairs(128, 128, false, false));
  EXPECT_TRUE(stores_panel_pairs(128, 256, false, false));
  EXPECT_TRUE(stores_panel_pairs(256, 128, false, false));
  EXPECT_FALSE(stores_panel_pairs(256, 256, false, false));  // one buffer (epi_buffers)
  for (int w : {64, 96, 112, 144, 160, 192, 200, 224}) EXPECT_FALSE(stores_panel_pairs(128, w, false, false)) << w;
  EXPECT_FALSE(stores_panel_pairs(128, 128, true, false));
  EXPECT_FALSE(stores_panel_pairs(128, 128, false, true));
  EXPECT_FALSE(stores_panel_pairs(kSmallBlockM, 128, false, false));
  EXPECT_FALSE(stores_panel_pairs(kDecodeBlockM, 128, false, false));
  for (const auto& c : kTileConfigs) {
    if (stores_panel_pairs(c.block_m, c.block_n, c.swap_ab, false)) {
      EXPECT_EQ(epi_buffers(c.block_m, c.block_n), 2) << c.block_m << "x" << c.block_n;
    }
  }
}

// Which calls store pairs: the ping-pong tiles with the plain epilogue, N a
// multiple of 64, K up to kPairsMaxK (where the call is C's write stream).
TEST(Sm90Config, PairedStoresForShortKAndWholeBlocksOfN) {
  GemmArgs g;
  g.m = 2048;
  g.n = 2048;
  g.k = 128;
  g.batch = 128;
  EXPECT_TRUE(pairs_c(g, 128, 128, false, true));
  EXPECT_FALSE(pairs_c(g, 128, 128, false, false));  // the cooperative tile keeps its panels
  EXPECT_FALSE(pairs_c(g, 128, 256, false, false));
  EXPECT_FALSE(pairs_c(g, 128, 192, false, true));  // not whole pairs
  EXPECT_FALSE(pairs_c(g, 128, 128, true, true));   // swapped
  g.k = kPairsMaxK;
  EXPECT_TRUE(pairs_c(g, 128, 128, false, true));
  g.k = kPairsMaxK + 1;
  EXPECT_FALSE(pairs_c(g, 128, 128, false, true));
  g.k = 64;
  g.n = 2048 + 32;  // the last block of N would run past it
  EXPECT_FALSE(pairs_c(g, 128, 128, false, true));
  g.n = 2048 + 64;
  EXPECT_TRUE(pairs_c(g, 128, 128, false, true));
  g.activation = Activation::relu;  // the fused epilogue keeps its panels
  EXPECT_FALSE(pairs_c(g, 128, 128, false, true));
}

TEST(Sm90Config, NonPositiveSmCountIsTreatedAsOne) {
  EXPECT_EQ(select_config(4096, 4096, 64, 0).num_ctas, 1);
  EXPECT_EQ(select_config(4096, 4096, 64, -4).num_ctas, 1);
}

TEST(Sm90Config, SharedMemoryFitsForEveryConfig) {
  for (const auto& s : kShapes)
    for (int i = -1; i < static_cast<int>(std::size(kTileWidths)); ++i) {
      const int bn = i < 0 ? 0 : kTileWidths[i];
      const Config c = select_config(s.m, s.n, s.k, 132, bn, 0, false, 0, 0, is_swap_width(bn) && !is_tile_config(bn, 1));
      EXPECT_GE(c.stages, 2) << "a ring needs two stages to overlap loads and MMAs";
      EXPECT_LE(c.stages, max_stages(c.block_n, c.block_m));
      EXPECT_LE(smem_bytes(c.block_n, c.stages, c.block_m), kHopperSmemOptIn)
          << shape(s.m, s.n, s.k, 132) << " " << describe(c);
      EXPECT_GE(c.group_m, 1);
    }
  // Every tile width, at the stage count the kernel is built with.
  for (TileConfig tc : kTileConfigs) {
    EXPECT_LE(smem_bytes(tc.block_n, stages_for(tc.block_n, tc.block_m), tc.block_m), kHopperSmemOptIn)
        << "block_n=" << tc.block_n << " block_m=" << tc.block_m;
    EXPECT_EQ(select_config(8192, 8192, 8192, 132, tc.block_n, 0, false, tc.block_m, 0, tc.swap_ab).stages,
              stages_for(tc.block_n, tc.block_m))
        << "block_n=" << tc.block_n << " block_m=" << tc.block_m;
  }
}

// An MN-major B of 112 columns (16-column panels) is held as whole 64-column
// panels in the 128- and 256-row tiles, whose rings keep their depth; not
// where a ring would lose a stage (144 wide, the 64-row tiles' 48), nor in
// 32-column panels (96, 160), nor at widths of whole panels or with B
// stored K-major.
TEST(Sm90Config, MnMajorBInWholePanelsWhereTheRingKeepsItsDepth) {
  for (TileConfig tc : kTileConfigs) {
    if (tc.swap_ab || tc.block_m == kDecodeBlockM) continue;
    const bool padded = pads_mn_b(tc.block_n, tc.block_m);
    const bool expected = tc.block_n == 112 && tc.block_m >= kBlockM;
    EXPECT_EQ(padded, expected) << "block_n=" << tc.block_n << " block_m=" << tc.block_m;
    EXPECT_EQ(b_slot_cols(tc.block_n, tc.block_m, false), tc.block_n) << "a K-major B is never padded";
    if (!padded) {
      EXPECT_EQ(b_slot_cols(tc.block_n, tc.block_m, true), tc.block_n);
      continue;
    }
    const int cols = b_slot_cols(tc.block_n, tc.block_m, true);
    EXPECT_EQ(cols, 128) << "two whole 64-column panels";
    EXPECT_LE(smem_bytes(tc.block_n, stages_for(tc.block_n, tc.block_m), tc.block_m, cols), kHopperSmemOptIn)
        << "block_n=" << tc.block_n << " block_m=" << tc.block_m;
    EXPECT_EQ(stage_bytes(tc.block_n, tc.block_m, cols), (tc.block_m + 128) * kBlockK * 2);
  }
  EXPECT_EQ(whole_panels(96), 128);
  EXPECT_EQ(whole_panels(160), 192);
  EXPECT_EQ(whole_panels(128), 128);
}

TEST(Sm90Config, MaxStagesIsTheDeepestRingThatFits) {
  for (TileConfig tc : kTileConfigs) {
    const int s = max_stages(tc.block_n, tc.block_m);
    EXPECT_LE(smem_bytes(tc.block_n, s, tc.block_m), kHopperSmemOptIn) << "block_n=" << tc.block_n;
    EXPECT_GT(smem_bytes(tc.block_n, s + 1, tc.block_m), kHopperSmemOptIn) << "block_n=" << tc.block_n;
  }
  // The shared-memory arithmetic written out: ring + epilogue panels + staged bias (64 fp32 per consumer)
  // + barriers + alignment slack.
  EXPECT_EQ(smem_bytes(256, 4), 1024 + 4 * 49152 + 2 * 2 * 64 * 64 * 2 + 2 * 64 * 4 + (2 * 4 + 4 + 2) * 8 +
                                           24);  // counted tiles' slots: 4 tile indices and a flag
  // 64-row tiles: no panels (they store from registers); the ring as deep as fits, at most 32.
  EXPECT_EQ(smem_bytes(32, 18, 64), 1024 + 18 * (64 + 32) * 128 + (2 * 18 + 4 + 2) * 8 + 80);
  // The decode tile: stages of 4 k-blocks, each 1 KiB of A and 64 x width of B.
  EXPECT_EQ(smem_bytes(32, 11, 8), 1024 + 11 * 4 * (1024 + 32 * 128) + (2 * 11 + 4 + 2) * 8 + 48);
  EXPECT_EQ(stages_for(8, 8), 28);
  EXPECT_EQ(stages_for(16, 8), 18);
  EXPECT_EQ(stages_for(32, 8), 11);
  EXPECT_EQ(stages_for(40, 8), 9);
  EXPECT_EQ(stages_for(48, 8), 8);
  EXPECT_EQ(stages_for(64, 8), 6);
  EXPECT_EQ(stages_for(32, 64), 18);
  EXPECT_EQ(stages_for(16, 64), 22);
  EXPECT_EQ(stages_for(8, 64), 25);
  EXPECT_EQ(stages_for(64, 64), 14);
  EXPECT_EQ(stages_for(128, 64), 9);
  EXPECT_EQ(stages_for(256, 64), 5);
}

// What Plan::config shows: the tile, the stages the kernel is built with, the
// cluster and consumer schedule asked for, and the persistent tile schedule.
TEST(Sm90Config, SelectConfigFillsThePublicFields) {
  for (TileConfig tc : kTileConfigs) {
    const Config c = select_config(4096, 4096, 4096, 132, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m,
                                   tc.cluster_n, tc.swap_ab);
    EXPECT_EQ(c.swap_ab, tc.swap_ab);
    EXPECT_EQ(c.block_m, tc.block_m);
    EXPECT_EQ(c.block_n, tc.block_n);
    EXPECT_EQ(c.block_k, tc.block_m == 8 ? 4 * kBlockK : kBlockK);
    EXPECT_EQ(c.stages, stages_for(tc.block_n, tc.block_m));
    EXPECT_EQ(c.cluster_m, tc.cluster_m);
    EXPECT_EQ(c.cluster_n, tc.cluster_n);
    EXPECT_EQ(c.pingpong, tc.pingpong);
    EXPECT_EQ(c.schedule, Schedule::persistent);
  }
}

TEST(Sm90Config, DescribeNamesTileAndStages) {
  Config c{};
  c.block_m = kBlockM;
  c.block_k = kBlockK;
  c.block_n = 256;
  c.stages = 4;
  EXPECT_EQ(describe(c), "128x256x64, 4 stages");
  c.block_n = 128;
  c.stages = 6;
  EXPECT_EQ(describe(c), "128x128x64, 6 stages");
  c.cluster_m = 2;
  EXPECT_EQ(describe(c), "128x128x64, 6 stages, cluster 2x1 (B multicast)");
  c.cluster_m = 1;
  c.cluster_n = 2;
  EXPECT_EQ(describe(c), "128x128x64, 6 stages, cluster 1x2 (A multicast)");
  c.cluster_n = 1;
  c.pingpong = true;
  EXPECT_EQ(describe(c), "128x128x64, 6 stages, ping-pong");
  EXPECT_EQ(describe(select_config(1, 4096, 4096, 132)), "8x32x256, 11 stages");
}

// The decode tile is built for A and B K-major only: with either MN-major
// the automatic choice at (m, n, k) keeps 64-row tiles.
void expect_64_rows_unless_k_major(int64_t m, int64_t n, int64_t k) {
  for (const bool a_k_major : {false, true}) {
    ConfigRequest r;
    r.a_k_major = a_k_major;
    r.b_k_major = !a_k_major;
    EXPECT_EQ(select_config(m, n, k, 132, r).block_m, 64) << shape(m, n, k, 132) << " A K-major " << a_k_major;
  }
}

// M <= 8, A and B K-major, nothing forced: the decode tile (8 rows, 4
// k-blocks a stage) at the width the M <= 64 rule picks, where built.
TEST(Sm90Config, SmallMTakesTheDecodeTile) {
  for (const Pick& p : {Pick{1, 4096, 4096, 32}, Pick{8, 4096, 14336, 32}, Pick{1, 1024, 4096, 8},
                        Pick{4, 6144, 4096, 48}, Pick{1, 3584, 18944, 32}, Pick{1, 4608, 4096, 40},
                        Pick{1, 2048, 1000, 16}, Pick{1, 1, 1, 8}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, 8) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    EXPECT_EQ(c.block_k, 256);
    EXPECT_EQ(c.stages, stages_for(p.block_n, 8));
    EXPECT_EQ(c.cluster_m, 1);
    EXPECT_FALSE(c.pingpong);
    const int64_t tiles = (p.n + p.block_n - 1) / p.block_n;
    EXPECT_EQ(c.num_ctas, tiles < 132 ? tiles : 132) << shape(p.m, p.n, p.k, 132);
    // The same width as the 64-row tile it replaces.
    EXPECT_EQ(c.block_n, select_config(p.m, p.n, p.k, 132, 0, 0, false, 64).block_n) << shape(p.m, p.n, p.k, 132);
  }
  // Not past 8 rows, nor where the width is not built as a decode tile
  // (wider than 64), nor at 64 wide, where it measured no faster.
  EXPECT_EQ(select_config(9, 4096, 4096, 132).block_m, 64);
  EXPECT_EQ(select_config(2, 57344, 8192, 132).block_m, 64) << "64 wide";
  EXPECT_EQ(select_config(2, 57344, 8192, 132).block_n, 64);
  EXPECT_EQ(select_config(16, 4096, 4096, 132).block_m, 64);
  EXPECT_EQ(select_config(1, 14336, 4096, 132).block_m, 64) << "128 wide";
  EXPECT_EQ(select_config(1, 12288, 4096, 132).block_m, 64) << "96 wide";
  // Not with A or B stored MN-major.
  expect_64_rows_unless_k_major(1, 4096, 4096);
  // Not where anything was forced: a width, or the 64-row height.
  EXPECT_EQ(select_config(1, 4096, 4096, 132, 32).block_m, 64);
  EXPECT_EQ(select_config(1, 4096, 4096, 132, 0, 0, false, 64).block_m, 64);
  // A batch of M <= 8 problems: the decode tile too, its tiles counted over the batch.
  ConfigRequest batched;
  batched.batch = 4;
  // (N = 1024: 128 tiles of 32 in one wave, the fewest.)
  const Config b = select_config(1, 1024, 4096, 132, batched);
  EXPECT_EQ(b.block_m, 8);
  EXPECT_EQ(b.block_n, 32);
  EXPECT_EQ(b.num_ctas, 128);
}

// 8 < M <= 64, A and B K-major, nothing forced, where the 64-row tiles would
// occupy at most half the SMs: the decode tile, at the width the M <= 64 rule
// picks among the decode widths for ceil(M / 8) block-rows.
TEST(Sm90Config, SmallGridTakesTheDecodeTile) {
  struct Case {
    int64_t m, n, k;
    int block_n, ctas;
  };
  // (N = 256: 32 tiles 64 x 8.) M = 16: 2 block-rows of 32 tiles 8 wide, one
  // wave; M = 32: 4 of 32; M = 64: 8 block-rows, 16 wide for one wave.
  for (const Case& t : {Case{16, 256, 2048, 8, 64}, Case{32, 256, 2048, 8, 128}, Case{64, 256, 2048, 16, 128},
                        Case{9, 128, 64, 8, 32}, Case{64, 512, 4096, 32, 128}}) {
    const Config c = select_config(t.m, t.n, t.k, 132);
    EXPECT_EQ(c.block_m, 8) << shape(t.m, t.n, t.k, 132) << " " << describe(c);
    EXPECT_EQ(c.block_n, t.block_n) << shape(t.m, t.n, t.k, 132) << " " << describe(c);
    EXPECT_EQ(c.num_ctas, t.ctas) << shape(t.m, t.n, t.k, 132);
    EXPECT_EQ(c.stages, stages_for(t.block_n, 8));
  }
  // Not where the 64-row tiles fill more than half the SMs (N = 2048: 128
  // tiles 16 wide), nor past 64 rows, nor with A or B MN-major, nor forced.
  EXPECT_EQ(select_config(16, 2048, 2048, 132).block_m, 64);
  EXPECT_EQ(select_config(65, 256, 2048, 132).block_m, 64);
  expect_64_rows_unless_k_major(16, 256, 2048);
  EXPECT_EQ(select_config(16, 256, 2048, 132, 8).block_m, 64);
  // A batch counts its problems' tiles: 4 x 16 x 256 makes 128 tiles 64 x 8,
  // not a small grid.
  ConfigRequest batched;
  batched.batch = 4;
  EXPECT_EQ(select_config(16, 256, 2048, 132, batched).block_m, 64);
  batched.batch = 2;
  EXPECT_EQ(select_config(16, 256, 2048, 132, batched).block_m, 8);
}

// Options::block_m = 8 forces the decode tile at any M (a block-row per 8
// rows); without a width, the M <= 64 rule's among the decode widths.
TEST(Sm90Config, ForcedDecodeTile) {
  const Config c = select_config(20, 4096, 1000, 132, 0, 0, false, 8);
  EXPECT_EQ(c.block_m, 8);
  EXPECT_TRUE(is_tile_config(c.block_n, 1, false, 8)) << describe(c);
  const Config w = select_config(20, 4096, 1000, 132, 32, 0, false, 8);
  EXPECT_EQ(w.block_m, 8);
  EXPECT_EQ(w.block_n, 32);
  EXPECT_EQ(w.num_ctas, 132) << "3 block-rows x 128 columns of tiles";
  EXPECT_EQ(select_config(1, 64, 64, 132, 8, 0, false, 8).num_ctas, 8);
  EXPECT_EQ(select_config(4096, 4096, 4096, 132, 64, 0, false, 8).block_m, 8);
  // A layout it is not built for (dispatch refuses it first: check_layout)
  // still gives a built configuration.
  ConfigRequest tn;
  tn.a_k_major = false;
  tn.block_m = 8;
  tn.block_n = 32;
  const Config t = select_config(1, 4096, 4096, 132, tn);
  EXPECT_TRUE(is_tile_config(t.block_n, t.cluster_m, t.pingpong, t.block_m, t.cluster_n)) << describe(t);
  EXPECT_NE(t.block_m, 8);
}

// An MN-major B narrower than whole 64-column panels is loaded in panels of
// 32 or 16 columns: 144 and 112 wide (16-column panels) ran at 0.55x their
// K-major speed as 128-row tiles (docs/PERF.md, "Mid-size products"), so
// the widths' rule takes them for a K-major B only; 160 (32-column panels)
// stays. (The swapped kernel's tiles, whose MN-major operand is B^T in
// whole 64-column panels, are the swapped rules'.)
TEST(Sm90Config, MnMajorBAvoidsSixteenColumnPanels) {
  ConfigRequest nn;
  nn.b_k_major = false;
  for (const Pick& p : {Pick{512, 4608, 3584, 160}, Pick{512, 3584, 3584, 128}, Pick{512, 10240, 8192, 160},
                        Pick{100, 14336, 4096, 128}}) {
    const Config c = select_config(p.m, p.n, p.k, 132, nn);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    EXPECT_FALSE(c.swap_ab) << describe(c);
  }
  for (int64_t m : {100, 300, 512, 1000, 2100})
    for (int64_t n : {3584, 4608, 14336, 37888}) {
      // (The tall tile 112 wide ran at 0.87x its K-major speed: the rule for it is best_tall's.)
      const Config c = select_config(m, n, 4096, 132, nn);
      if (c.block_m == kBlockM && !c.swap_ab) {
        EXPECT_NE(detail::mn_panel_cols(c.block_n), 16u) << shape(m, n, 4096, 132) << " " << describe(c);
      }
    }
}

// Mid-size products (more than 640 rows, N and K >= 1024, one to six waves
// of 128 x 128 tiles): one wave of large tiles where the widths' rule took
// two of narrow ones. Measured (bf16, docs/PERF.md, "Mid-size products"):
// 2900 x 1024 x 4096 0.76x -> 0.92x cuBLAS on 256 x 96, 2200 x 2048 x 4096
// NT 0.77x -> 0.98x on 16 token tiles of the tall swapped 144, 2400 x 4608 x
// 4096 NT 0.84x -> 0.99x on 128 x 224 swapped; at K = 2048, 3500 x 2048 NT
// 0.91x -> 0.98x on 128 x 224 swapped, while ping-pong 128 x 128 keeps 1000 x
// 8192 (2% faster there than 128 x 256). B MN-major (NN) takes the swapped
// kernel too (docs/PERF.md, "Swap-AB with B stored K x N": 1100 x 4096 x
// 4096 0.80x -> 0.99x on the tall swapped 144), from K = 3584 only.
TEST(Sm90Config, MidSizeProductsTakeOneWaveOfLargeTiles) {
  struct Mid {
    int64_t m, n;
    bool b_k_major;
    int block_m, block_n;
    bool swap_ab;
  };
  for (const Mid& p : {Mid{2900, 1024, true, 256, 96, false}, Mid{2900, 1024, false, 128, 200, true},
                       Mid{2200, 2048, true, 256, 144, true}, Mid{2100, 2048, true, 256, 136, true},
                       Mid{2400, 4608, true, 128, 224, true}, Mid{2400, 4608, false, 128, 224, true},
                       Mid{2100, 2048, false, 256, 136, true}, Mid{1100, 4096, false, 256, 144, true}}) {
    ConfigRequest r;
    r.b_k_major = p.b_k_major;
    const Config c = select_config(p.m, p.n, 4096, 132, r);
    const std::string what = shape(p.m, p.n, 4096, 132) + (p.b_k_major ? " NT " : " NN ") + describe(c);
    EXPECT_EQ(c.block_m, p.block_m) << what;
    EXPECT_EQ(c.block_n, p.block_n) << what;
    EXPECT_EQ(c.swap_ab, p.swap_ab) << what;
  }
  // Shorter K: the same but for ping-pong (ahead of 128 x 256 in as many
  // waves) and the 64-row tile (left out).
  const Config short_k = select_config(3500, 2048, 2048, 132);
  EXPECT_TRUE(short_k.swap_ab && short_k.block_n == 224) << describe(short_k);
  EXPECT_TRUE(select_config(1000, 8192, 2048, 132).pingpong);
  EXPECT_EQ(select_config(2900, 1024, 2048, 132).block_m, 256);
  EXPECT_NE(select_config(700, 3072, 1024, 132).block_m, 64);
  ConfigRequest nn;
  nn.b_k_major = false;
  EXPECT_TRUE(select_config(1600, 6144, 1024, 132, nn).pingpong);  // (the swapped 256 x 152: 10% slower)
  EXPECT_FALSE(select_config(1600, 6144, 1024, 132, nn).swap_ab);
  EXPECT_TRUE(select_config(1600, 6144, 4096, 132, nn).swap_ab);
  // Not a batch (the swapped kernel is for plain calls), nor past six waves
  // (4096^3: ping-pong 128 x 128), nor with a configuration asked for.
  ConfigRequest batched;
  batched.batch = 2;
  EXPECT_FALSE(select_config(2200, 2048, 4096, 132, batched).swap_ab);
  EXPECT_TRUE(select_config(4096, 4096, 4096, 132).pingpong);
  ConfigRequest forced;
  forced.block_n = 96;
  EXPECT_EQ(select_config(2900, 1024, 4096, 132, forced).block_m, 128);
}

}  // namespace

// Where the tall tile's last block-row leaves accumulators out (its tiles
// have less work) and R block-rows make one raster group, a grid prime to R
// rotates each CTA's tiles through the block-rows, where 132 CTAs would
// give each the tiles of one block-row only (tall_grid).
TEST(Sm90Config, TallGridRotatesTheBlockRowsWhereTheLastIsLight) {
  // 448 x 14336 x 4096: 2 block-rows, the last 192 rows (one accumulator left out), 256 tiles.
  const Config tall = select_config(448, 14336, 4096, 132);
  EXPECT_EQ(tall.block_m, 256);
  EXPECT_EQ(tall.block_n, 112);
  EXPECT_EQ(tall.num_ctas, 131);
  // Forced, at 78 SMs (gcd(78, 2) = 2): 77.
  EXPECT_EQ(select_config(448, 14336, 4096, 78, 112, 0, false, 256).num_ctas, 77);
  // No light block-row, one block-row, fewer waves than block-rows, more
  // block-rows than a raster group: the full grid.
  EXPECT_EQ(select_config(512, 14336, 4096, 132).num_ctas, 132);
  EXPECT_EQ(select_config(184, 14336, 4096, 132).num_ctas, 128);
  EXPECT_EQ(select_config(448, 4096, 4096, 132, 112, 0, false, 256).num_ctas, 74);  // 2 x 37 tiles
  EXPECT_EQ(select_config(4000, 14336, 4096, 132, 112, 0, false, 256).num_ctas, 132);
  // The 128-row tiles keep the full grid (they leave nothing out).
  EXPECT_EQ(select_config(352, 14336, 4096, 132).block_m, 128);
  EXPECT_EQ(select_config(352, 14336, 4096, 132).num_ctas, 132);
}

// The tall tile (256 rows) where the 128-row tiles make two to four
// block-rows of a wide B and it scores higher (best_tall): the picks that
// `bench --configs all` found fastest (docs/PERF.md, "The tall tile").
TEST(Sm90Config, TallTileForAFewBlockRowsOfAWideB) {
  struct Pick {
    int64_t m, n, k;
    int block_m, block_n;
  };
  for (const Pick& p : {Pick{184, 14336, 4096, 256, 112}, Pick{192, 14336, 4096, 256, 112},
                        Pick{256, 14336, 4096, 256, 112}, Pick{512, 14336, 4096, 256, 112},
                        Pick{184, 28672, 4096, 256, 112}, Pick{184, 57344, 8192, 256, 112},
                        Pick{160, 12288, 4096, 256, 96},
                        // two block-rows, the last light, on a rotated grid
                        Pick{448, 28672, 4096, 256, 112}, Pick{448, 57344, 8192, 256, 112},
                        Pick{416, 28672, 2048, 256, 112},
                        // where the 128-row tiles (or the 64-row ones) measured faster
                        Pick{160, 22016, 4096, 128, 112}, Pick{160, 8192, 8192, 128, 128},
                        Pick{200, 12288, 4096, 128, 192}, Pick{360, 14336, 4096, 128, 112},
                        Pick{384, 14336, 4096, 128, 112}, Pick{160, 4096, 4096, 64, 96}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_m, p.block_m) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    if (c.block_m == 256) {
      EXPECT_EQ(c.stages, 4);
      EXPECT_FALSE(c.pingpong);
      EXPECT_EQ(c.cluster_m, 1);
      EXPECT_EQ(c.cluster_n, 1);
    }
  }
  // Where the 128-row tiles measured faster than the tall tile, and the swapped kernel now runs (two and three token
  // tiles: 420 x 37888 x 3584 even with them, 440 x 10240 x 8192 7% faster).
  EXPECT_TRUE(select_config(420, 37888, 3584, 132).swap_ab);
  EXPECT_TRUE(select_config(440, 10240, 8192, 132).swap_ab);
  // One block-row of 128 rows, or many: never.
  for (const int64_t m : {64, 128, 513, 1024, 4096})
    EXPECT_NE(select_config(m, 14336, 4096, 132).block_m, 256) << m;
  // B MN-major (op_b = N): never automatically (measured on H100, docs/PERF.md, "The tall tile with B stored K x
  // N"): the swapped kernel where it computes fewer rows (400 on two tiles of 200, 416 on two of 208, 432 on two of
  // 224 or, at N = 11008, 448 on two tall swapped tiles of 152), else the 128-row tiles (ping-pong at 240 x 28672,
  // 480 and 512 x 14336 and 180 x 57344; 128 x 256 at 192 and 256 x 14336; 128 x 192 at 136 x 11008).
  ConfigRequest nn{};
  nn.b_k_major = false;
  struct NnPick {
    int64_t m, n, k;
    int block_m, block_n;
    bool pingpong, swap_ab;
  };
  for (const NnPick& p :
       {NnPick{400, 14336, 4096, 128, 200, false, true}, NnPick{416, 57344, 2048, 128, 208, false, true},
        NnPick{432, 28672, 4096, 128, 224, false, true}, NnPick{448, 11008, 4096, 256, 152, false, true},
        NnPick{240, 28672, 2048, 128, 128, true, false}, NnPick{480, 14336, 4096, 128, 128, true, false},
        NnPick{512, 14336, 2048, 128, 128, true, false}, NnPick{192, 14336, 4096, 128, 256, false, false},
        NnPick{256, 14336, 4096, 128, 256, false, false}, NnPick{136, 11008, 4096, 128, 192, false, false},
        NnPick{180, 57344, 4096, 128, 128, true, false}}) {
    const Config c = select_config(p.m, p.n, p.k, 132, nn);
    const std::string what = shape(p.m, p.n, p.k, 132) + " NN " + describe(c);
    EXPECT_EQ(c.block_m, p.block_m) << what;
    EXPECT_EQ(c.block_n, p.block_n) << what;
    EXPECT_EQ(c.pingpong, p.pingpong) << what;
    EXPECT_EQ(c.swap_ab, p.swap_ab) << what;
  }
  for (const int64_t m : {136, 160, 184, 192, 256, 300, 400, 448, 512})
    for (const int64_t n : {8192, 11008, 12288, 14336, 28672, 57344}) {
      const Config c = select_config(m, n, 4096, 132, nn);
      EXPECT_FALSE(c.block_m == kTallBlockM && !c.swap_ab) << shape(m, n, 4096, 132) << " NN " << describe(c);
    }
  // Where the swapped kernel is not built for the layout: the tall tile.
  ConfigRequest a_m_major{};
  a_m_major.a_k_major = false;
  const Config unswapped = select_config(136, 14336, 4096, 132, a_m_major);
  EXPECT_EQ(unswapped.block_m, 256);
  EXPECT_FALSE(unswapped.swap_ab);
  // Asked for: block_m = 256 alone takes best_tall's width; with a width, that width.
  EXPECT_EQ(select_config(136, 14336, 4096, 132, 0, 0, false, 256).block_n, 112);
  const Config forced = select_config(4096, 4096, 4096, 132, 64, 0, false, 256);
  EXPECT_EQ(forced.block_m, 256);
  EXPECT_EQ(forced.block_n, 64);
  EXPECT_EQ(forced.num_ctas, 132);  // 16 x 64 tiles, at most one CTA per SM
}

// The swapped kernel (swap_ab) for 129-176 and 193-224 rows of a wide B
// with A and B K-major, where its grid (N / 128 tiles) fills the SMs, and
// for 257-320 rows where the 128-row tiles compute 384: faster than the
// tall tile and the 128-row tiles there (docs/PERF.md, "Swap-AB"). Its
// width and height: the least time on the busiest SM (swap_fit), 256 rows
// where that halves the waves of the 128-row tiles (docs/PERF.md, "Swap-AB,
// tall").
TEST(Sm90Config, SwappedKernelForAFewTokensPastOneBlockRow) {
  struct Pick {
    int64_t m, n, k;
    int block_m, block_n, ctas;
  };
  for (const Pick& p : {Pick{136, 14336, 4096, 128, 136, 112}, Pick{160, 14336, 4096, 128, 160, 112},
                        Pick{129, 14336, 4096, 128, 136, 112}, Pick{140, 14336, 4096, 128, 144, 112},
                        Pick{136, 28672, 4096, 256, 136, 112}, Pick{144, 28672, 4096, 256, 144, 112},
                        Pick{150, 14336, 4096, 128, 152, 112}, Pick{160, 57344, 8192, 256, 160, 132},
                        Pick{150, 57344, 8192, 256, 152, 132}, Pick{160, 28672, 4096, 256, 160, 112},
                        Pick{200, 14336, 4096, 128, 200, 112}, Pick{193, 28672, 4096, 128, 200, 132},
                        Pick{208, 57344, 8192, 128, 208, 132}, Pick{200, 57344, 8192, 128, 200, 132},
                        Pick{161, 14336, 4096, 128, 176, 112}, Pick{176, 57344, 8192, 128, 176, 132},
                        Pick{209, 14336, 4096, 128, 224, 112}, Pick{224, 28672, 4096, 128, 224, 132},
                        // two token tiles, where the 128-row tiles compute 384 rows: 256 rows of N where that
                        // halves the waves (14336: 112 tiles, one wave, against 224), else 128
                        Pick{288, 14336, 4096, 256, 144, 112}, Pick{300, 14336, 4096, 256, 152, 112},
                        Pick{320, 14336, 4096, 256, 160, 112}, Pick{320, 57344, 8192, 128, 160, 132},
                        Pick{300, 57344, 8192, 128, 152, 132}, Pick{257, 28672, 4096, 256, 136, 132},
                        Pick{273, 28672, 4096, 256, 144, 132},
                        Pick{300, 22016, 4096, 128, 152, 132}, Pick{296, 28672, 4096, 256, 152, 132},
                        // three or four token tiles (321-640 rows) where the 128-row tiles compute 10% more
                        // rows; the 128-row swapped kernel at most four (four of 144: the last tile's box of
                        // the tokens cut to those there are)
                        Pick{520, 14336, 4096, 128, 176, 132}, Pick{516, 22016, 4096, 128, 176, 132},
                        Pick{520, 4096, 4096, 128, 136, 128}, Pick{540, 12288, 4096, 128, 136, 132},
                        Pick{544, 28672, 4096, 128, 136, 132}, Pick{576, 12288, 8192, 128, 144, 132},
                        Pick{520, 8192, 8192, 256, 136, 128}, Pick{530, 8192, 4096, 256, 136, 128},
                        Pick{530, 57344, 4096, 256, 136, 132},
                        Pick{432, 8192, 8192, 128, 224, 128}, Pick{400, 8192, 4096, 128, 200, 128},
                        Pick{450, 57344, 8192, 128, 152, 132}, Pick{400, 18944, 4096, 256, 136, 132},
                        Pick{420, 37888, 3584, 128, 224, 132}, Pick{440, 10240, 8192, 256, 152, 120},
                        // 385-400 rows: two of the 128 x 200 (five stages) ahead of the tall tile
                        Pick{388, 14336, 4096, 128, 200, 132}, Pick{396, 57344, 4096, 128, 200, 132},
                        Pick{392, 28672, 2048, 128, 200, 132}, Pick{400, 57344, 8192, 128, 200, 132},
                        Pick{400, 28672, 4096, 128, 200, 132}, Pick{400, 14336, 4096, 128, 200, 132}}) {
    const Config c = select_config(p.m, p.n, p.k, 132);
    EXPECT_TRUE(c.swap_ab) << shape(p.m, p.n, p.k, 132) << " " << describe(c);
    EXPECT_EQ(c.block_m, p.block_m) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.block_n, p.block_n) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.num_ctas, p.ctas) << shape(p.m, p.n, p.k, 132);
    EXPECT_EQ(c.stages, stages_for(p.block_n, p.block_m));
    EXPECT_FALSE(c.pingpong);
    EXPECT_EQ(c.cluster_m, 1);
    EXPECT_EQ(c.cluster_n, 1);
  }
  // The tall swapped tiles: 4 stages, one panel buffer per consumer for them (epi_buffers).
  for (const int w : {144, 152, 160}) {
    EXPECT_EQ(stages_for(w, 256), 4) << w;
    EXPECT_EQ(epi_buffers(256, w), 1) << w;
    EXPECT_EQ(smem_bytes(w, 4, 256), 1024 + 4 * (256 + w) * 128 + 2 * (64 * 64 * 2 + 64 * 4) + (2 * 4 + 4 + 2) * 8 + 24);
  }
  EXPECT_EQ(epi_buffers(256, 128), 2);
  EXPECT_EQ(epi_buffers(128, 160), 2);
  // Not: one block-row, 177-192 rows (200 against the tall tile's 192), 225-256, 321-384 or 401-512 (the tall or
  // the 128-row tiles), a grid that leaves SMs idle (4096 / 128 = 32 tiles; 12288: 96), anything forced.
  for (const int64_t m : {64, 128, 177, 192, 225, 256, 321, 352, 384, 401, 448, 512})
    EXPECT_FALSE(select_config(m, 14336, 4096, 132).swap_ab) << m;
  // Past two token tiles: less than 10% fewer rows (600 and 620 against 640, 704 against 768), or five token tiles
  // of the 128-row kernel (577-640 rows of 144).
  for (const int64_t m : {600, 620, 700}) EXPECT_FALSE(select_config(m, 14336, 4096, 132).swap_ab) << m;
  EXPECT_FALSE(select_config(600, 4096, 4096, 132).swap_ab);
  EXPECT_FALSE(select_config(152, 4096, 4096, 132).swap_ab);
  EXPECT_FALSE(select_config(136, 12288, 4096, 132).swap_ab);
  EXPECT_FALSE(select_config(136, 14336, 4096, 132, 112).swap_ab);
  // Asked for: the narrowest swapped width that holds M, else the widest; a width asked for, that width.
  EXPECT_EQ(select_config(100, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 136);
  EXPECT_EQ(select_config(140, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 144);
  EXPECT_EQ(select_config(150, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 152);
  EXPECT_EQ(select_config(160, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 160);
  EXPECT_EQ(select_config(170, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 176);
  EXPECT_EQ(select_config(200, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 200);
  EXPECT_EQ(select_config(204, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 208);
  EXPECT_EQ(select_config(210, 4096, 4096, 132, 0, 0, false, 0, 0, true).block_n, 224);
  // The same at 256 rows: its widths 136, 144, 152 and 160.
  for (const auto& [m, width] : {std::pair<int64_t, int>{100, 136}, {140, 144}, {150, 152}, {160, 160}, {1000, 160}}) {
    const Config tall = select_config(m, 4096, 4096, 132, 0, 0, false, 256, 0, true);
    EXPECT_TRUE(tall.swap_ab) << m;
    EXPECT_EQ(tall.block_m, 256) << m;
    EXPECT_EQ(tall.block_n, width) << m;
    EXPECT_EQ(tall.stages, 4) << m;
  }
  EXPECT_EQ(select_config(136, 14336, 4096, 132, 152, 0, false, 256, 0, true).block_n, 152);
  EXPECT_EQ(select_config(136, 14336, 4096, 132, 152, 0, false, 256, 0, true).num_ctas, 56);
  const Config wide = select_config(1000, 4096, 4096, 132, 0, 0, false, 0, 0, true);
  EXPECT_TRUE(wide.swap_ab);
  EXPECT_EQ(wide.block_n, 224);
  EXPECT_EQ(wide.num_ctas, 132);  // 32 x 5 tiles
  const Config forced = select_config(136, 14336, 4096, 132, 208, 0, false, 0, 0, true);
  EXPECT_TRUE(forced.swap_ab);
  EXPECT_EQ(forced.block_n, 208);
  EXPECT_EQ(forced.stages, stages_for(208));
  // The kernel's M is N: 14336 / 128 = 112 tiles of one column.
  EXPECT_EQ(forced.num_ctas, 112);
  // B MN-major (op_b = N): forced, and automatically by the same rule (the
  // kernel's A, B^T, in whole 64-column panels): 136 rows on one token tile
  // of 136 (0.81x -> 0.97x cuBLAS), 288 on two of the tall 144 (0.82x ->
  // 1.07x; docs/PERF.md, "Swap-AB with B stored K x N").
  ConfigRequest mn{};
  mn.swap_ab = true;
  mn.b_k_major = false;
  EXPECT_TRUE(select_config(136, 14336, 4096, 132, mn).swap_ab);
  mn.swap_ab = false;
  const Config mn_136 = select_config(136, 14336, 4096, 132, mn);
  EXPECT_TRUE(mn_136.swap_ab && mn_136.block_m == 128 && mn_136.block_n == 136) << describe(mn_136);
  const Config mn_288 = select_config(288, 14336, 4096, 132, mn);
  EXPECT_TRUE(mn_288.swap_ab && mn_288.block_m == 256 && mn_288.block_n == 144) << describe(mn_288);
  EXPECT_EQ(select_config(288, 14336, 4096, 132).block_n, 144);  // (as with B K-major)
  // Where the layout is not built swapped (A MN-major), forcing it falls back to the unswapped tiles.
  ConfigRequest a_mn{};
  a_mn.swap_ab = true;
  a_mn.a_k_major = false;
  EXPECT_FALSE(select_config(136, 14336, 4096, 132, a_mn).swap_ab);
}

}  // namespace tcgemm::sm90

