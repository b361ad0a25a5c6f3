// The sm100 kernel's host arithmetic: budgets, descriptors, the tile-to-CTA
// mapping, Cluster Launch Control response decoding and launch parameters.
// None of it needs a GPU; the kernel itself has not run on Blackwell here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sm100/sm100_config.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm90/sm90_gemm.hpp"
#include "sm100/umma_desc.hpp"

namespace tcgemm::sm100 {
namespace {

// B200's opt-in per-block shared memory and tensor memory per SM, written
// out independently of the library's constants.
constexpr int kB200SmemOptIn = 232448;  // 227 KiB
constexpr int kB200TmemColumns = 512;
constexpr int kPtxasReservedSmem = 1024;  // static smem ptxas adds for tcgen05.alloc

uint32_t field(uint64_t v, int lo, int hi) { return static_cast<uint32_t>((v >> lo) & ((uint64_t{1} << (hi - lo + 1)) - 1)); }

TEST(Sm100Config, BudgetsFit) {
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    SCOPED_TRACE("block_n=" + std::to_string(tc.block_n) + " cta_group=" + std::to_string(tc.cta_group) +
                 " cta_rows=" + std::to_string(tc.cta_rows));
    const int s = stages_for(tc.block_n, tc.cta_group, tc.cta_rows, tc.swap_ab);
    EXPECT_LE(smem_bytes(tc.block_n, s, tc.cta_group, tc.cta_rows, tc.swap_ab) + kPtxasReservedSmem, kB200SmemOptIn);
    EXPECT_GT(smem_bytes(tc.block_n, s + 1, tc.cta_group, tc.cta_rows, tc.swap_ab) + kPtxasReservedSmem, kB200SmemOptIn)
        << "the ring is as deep as fits";
    // Every stage's A and B, and every epilogue panel, start on a 1024-byte swizzle pattern.
    EXPECT_EQ(stage_bytes(tc.block_n, tc.cta_group, tc.cta_rows) % 1024, 0);
    EXPECT_EQ((tc.block_n / tc.cta_group) * kBlockK * 2 % 1024, 0);
    EXPECT_EQ(panel_bytes(tc.cta_rows) % 1024, 0);
    EXPECT_TRUE(tc.cta_rows == 128 || (tc.cta_rows == 64 && tc.cta_group == 1)) << "64-row tiles are single-CTA";
    EXPECT_LE(tmem_columns(tc.block_n), kB200TmemColumns);
    EXPECT_GE(tmem_columns(tc.block_n), 2 * tc.block_n) << "two accumulators of block_n fp32 columns";
    const int c = tmem_columns(tc.block_n);
    EXPECT_EQ(c & (c - 1), 0) << "tcgen05.alloc takes a power of two";
    EXPECT_GE(c, 32);
    // The second accumulator starts past the first and ends inside the allocation.
    EXPECT_GE(acc_columns(tc.block_n), tc.block_n);
    EXPECT_LE((kAccBuffers - 1) * acc_columns(tc.block_n) + tc.block_n, c);
    EXPECT_TRUE(tc.cta_group == 2 ? valid_2sm_mma_shape(256, tc.block_n)
                                  : valid_1sm_mma_shape(tc.cta_rows, tc.block_n));
  }
  EXPECT_EQ(stages_for(256), 6);
  EXPECT_EQ(stages_for(128), 8);
  EXPECT_EQ(tmem_columns(256), 512);
  EXPECT_EQ(tmem_columns(128), 256);
  EXPECT_EQ(stage_bytes(256), (128 + 128) * 64 * 2) << "128 rows of A and half of a 256-wide B";
  EXPECT_EQ(kThreads, 224) << "7 warps: 4 epilogue, scheduler, producer, MMA";
}

TEST(Sm100Config, BarrierRegionKeepsResponsesAligned) {
  // The CLC responses follow the barriers: 16-byte aligned for the 128-bit load.
  for (int s : {4, 6, 8}) {
    const int barriers = (2 * s + 2 * kAccBuffers + kEpilogueWarps * kEpiBuffers + 2 * kClcSlots) * 8;
    EXPECT_EQ(barriers % 16, 0) << "stages=" << s;
    EXPECT_EQ(barrier_bytes(s), barriers + kClcSlots * kClcResponseBytes + 16);
  }
}

TEST(UmmaDesc, InstructionDescriptorBits) {
  // Independently derived values (PTX ISA instruction-descriptor table).
  EXPECT_EQ(instr_desc_f16(true, Major::K, Major::K, 256, 256), 0x10400490u) << "bf16, M=256, N=256, K-major";
  EXPECT_EQ(instr_desc_f16(false, Major::K, Major::K, 128, 128), 0x08200010u) << "f16, M=128, N=128";
  const uint32_t d = instr_desc_f16(false, Major::MN, Major::MN, 256, 128);
  EXPECT_EQ(field(d, 4, 5), 1u) << "D is fp32";
  EXPECT_EQ(field(d, 7, 9), 0u);
  EXPECT_EQ(field(d, 10, 12), 0u);
  EXPECT_EQ(field(d, 15, 15), 1u) << "A MN-major";
  EXPECT_EQ(field(d, 16, 16), 1u) << "B MN-major";
  EXPECT_EQ(field(d, 17, 22), 128u >> 3);
  EXPECT_EQ(field(d, 24, 28), 256u >> 4);
  EXPECT_EQ(field(d, 0, 3) | field(d, 13, 14) | field(d, 23, 23) | field(d, 29, 31), 0u) << "no sparsity/negate/shift";
}

// The single-CTA widths that are not powers of two: N = 48 and 96 at M = 128
// (a multiple of 16 in [16, 256]: valid), in the instruction descriptor's N
// >> 3 field; tensor memory allocated as the next power of two of both
// accumulators, each in its half.
TEST(UmmaDesc, SingleCtaWidthsBetweenPowersOfTwo) {
  for (const int n : {48, 96}) {
    SCOPED_TRACE("N=" + std::to_string(n));
    EXPECT_TRUE(valid_1sm_mma_shape(128, n));
    const uint32_t d = instr_desc_f16(true, Major::K, Major::K, 128, n);
    EXPECT_EQ(field(d, 17, 22), static_cast<uint32_t>(n / 8));
    EXPECT_EQ(field(d, 24, 28), 128u / 16);
    EXPECT_EQ(field(d, 7, 9), 1u) << "bf16 A";
    EXPECT_EQ(field(d, 10, 12), 1u) << "bf16 B";
  }
  EXPECT_EQ(instr_desc_f16(false, Major::K, Major::K, 128, 48), 0x080C0010u) << "f16, M=128, N=48";
  EXPECT_EQ(instr_desc_f16(false, Major::MN, Major::K, 128, 96), 0x08188010u) << "f16, M=128, N=96, A MN-major";
  EXPECT_FALSE(valid_1sm_mma_shape(128, 40)) << "N a multiple of 16 at M = 128";
  EXPECT_FALSE(valid_1sm_mma_shape(128, 8));
  EXPECT_EQ(tmem_columns(48), 128);
  EXPECT_EQ(acc_columns(48), 64);
  EXPECT_EQ(tmem_columns(96), 256);
  EXPECT_EQ(acc_columns(96), 128);
  for (int w : {16, 32, 64, 128, 256}) EXPECT_EQ(acc_columns(w), w) << "the power-of-two widths: buffers back to back";
  EXPECT_EQ(stages_for(48, 1), 10) << "stored from registers: no panels, the ring takes their 32 KiB";
  EXPECT_EQ(stages_for(96, 1), 6);
  // The ring's depths with the panels' bytes given to it (stores_from_registers), written out.
  EXPECT_EQ(stages_for(16, 1), 12);
  EXPECT_EQ(stages_for(32, 1), 11);
  EXPECT_EQ(stages_for(8, 1, 64), 24);
  EXPECT_EQ(stages_for(48, 1, 64), 16);
  EXPECT_EQ(stages_for(144, 1, 128, true), 6);
  EXPECT_EQ(stages_for(176, 1, 128, true), 5);
  EXPECT_EQ(stages_for(224, 1, 128, true), 5);
  EXPECT_EQ(smem_bytes(64, 4, 1) - smem_bytes(48, 4, 1), epilogue_bytes() + 4 * 16 * 64 * 2)
      << "the panels and 16 columns of B a stage";
  EXPECT_EQ(stage_bytes(48, 1), (128 + 48) * 64 * 2);
  EXPECT_EQ(stage_bytes(96, 1), (128 + 96) * 64 * 2);
}

// Which widths take B stored MN-major (op_b = N): a CTA's share of B whole
// 64-column panels. The public predicate and the library's agree.
TEST(Sm100Config, MnMajorBNeedsWholePanels) {
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    SCOPED_TRACE("block_n=" + std::to_string(tc.block_n) + " cta_group=" + std::to_string(tc.cta_group));
    EXPECT_TRUE(builds_for_b(tc.block_n, tc.cta_group, true)) << "every configuration takes a K-major B";
    EXPECT_EQ(builds_for_b(tc.block_n, tc.cta_group, false), sm100_tile_builds_mn_major_b(tc.block_n, tc.cta_group));
    EXPECT_EQ(builds_for_b(tc.block_n, tc.cta_group, false), (tc.block_n / tc.cta_group) % 64 == 0);
  }
  for (int w : {8, 16, 32, 40, 48, 96}) EXPECT_FALSE(builds_for_b(w, 1, false)) << w;
  for (int w : {64, 128, 256}) EXPECT_TRUE(builds_for_b(w, 1, false)) << w;
  EXPECT_TRUE(builds_for_b(128, 2, false)) << "a pair's 128-wide tile: 64 columns per CTA";
}

TEST(UmmaDesc, SharedMemoryDescriptorBits) {
  const uint64_t k = operand_desc(Major::K, 0x8400, 64);
  EXPECT_EQ(field(k, 0, 13), 0x8400u >> 4);
  EXPECT_EQ(field(k, 32, 45), 1024u >> 4) << "SBO: 8 rows of 128 bytes";
  EXPECT_EQ(field(k, 46, 48), 1u) << "sm_100 descriptor version";
  EXPECT_EQ(field(k, 49, 51), 0u) << "1024-byte aligned tiles";
  EXPECT_EQ(field(k, 52, 52), 0u);
  EXPECT_EQ(field(k, 61, 63), 2u) << "128-byte swizzle";
  const uint64_t mn = operand_desc(Major::MN, 0x8000, 64);
  EXPECT_EQ(field(mn, 16, 29), (64u * 128) >> 4) << "LBO: 64-element panels 8 KiB apart";
  EXPECT_EQ(field(mn, 32, 45), 1024u >> 4);
  // The same bytes as the wgmma descriptor except the version bit.
  EXPECT_EQ(make_smem_desc(0x400, 16, 1024), 0x4000404000010040ull);
  EXPECT_TRUE(valid_2sm_mma_shape(256, 256));
  EXPECT_TRUE(valid_2sm_mma_shape(256, 128));
  EXPECT_FALSE(valid_2sm_mma_shape(128, 256));
  EXPECT_FALSE(valid_2sm_mma_shape(256, 264));
  EXPECT_EQ(tmem_addr(0x20, 64, 16), (64u << 16) + 0x30u);
}

TEST(ClcResponse, DecodesToTheCanceledClustersTile) {
  EXPECT_EQ(tile_of(ClcResponse{false, 0}), -1);
  EXPECT_EQ(tile_of(ClcResponse{false, 42}), -1) << "a failed cancel carries no work, whatever the bits";
  EXPECT_EQ(tile_of(ClcResponse{true, 0}), 0);
  EXPECT_EQ(tile_of(ClcResponse{true, 2}), 1) << "cluster 1 starts at CTA x = 2";
  EXPECT_EQ(tile_of(ClcResponse{true, 2 * 4095}), 4095);
}

// Any first-CTA index the hardware can report (an even x below the grid)
// maps to a distinct tile, and every tile of the grid is reachable.
TEST(ClcResponse, EveryClusterOfTheGridMapsToItsTile) {
  const int tiles = 777;
  std::set<int> seen;
  for (uint32_t x = 0; x < 2u * tiles; x += kCtaGroup) {
    const int t = tile_of(ClcResponse{true, x});
    ASSERT_GE(t, 0);
    ASSERT_LT(t, tiles);
    seen.insert(t);
  }
  EXPECT_EQ(static_cast<int>(seen.size()), tiles);
}

// The two CTAs of a cluster split a 256-row tile into two 128-row halves and
// its B columns into two halves; over all tiles every row block and column
// half is loaded exactly once per tile row/column.
TEST(TileMapping, PairSplitsRowsAndBColumns) {
  for (int block_n : {128, 256}) {
    const GroupedRaster r{5, 7, 4};
    std::set<std::pair<int, int>> a_rows, b_cols;
    for (int i = 0; i < r.num_tiles(); ++i) {
      const TileCoord t = r.tile(i);
      for (int rank = 0; rank < kCtaGroup; ++rank) {
        EXPECT_EQ(cta_row0(t, rank), t.m_block * 256 + rank * 128);
        EXPECT_EQ(cta_b_col0(t, rank, block_n), t.n_block * block_n + rank * block_n / 2);
        a_rows.insert({cta_row0(t, rank), t.n_block});
        b_cols.insert({cta_b_col0(t, rank, block_n), t.m_block});
      }
    }
    EXPECT_EQ(static_cast<int>(a_rows.size()), r.num_tiles() * kCtaGroup);
    EXPECT_EQ(static_cast<int>(b_cols.size()), r.num_tiles() * kCtaGroup);
  }
}

TEST(Sm100SelectConfig, GridsAndSchedules) {
  // B200: 148 SMs, 74 two-CTA clusters at once.
  const Config clc = select_config(8192, 8192, 8192, 148);
  EXPECT_EQ(clc.block_n, 256);
  EXPECT_EQ(clc.schedule, Schedule::cluster_launch_control) << "Cluster Launch Control is the default schedule";
  EXPECT_EQ(clc.num_tiles, 32 * 32);
  EXPECT_EQ(clc.grid_clusters, clc.num_tiles) << "CLC: the grid covers every tile";
  EXPECT_EQ(clc.stages, stages_for(256));
  const Config per = select_config(8192, 8192, 8192, 148, 0, Schedule::persistent);
  EXPECT_EQ(per.schedule, Schedule::persistent);
  EXPECT_EQ(per.grid_clusters, 74) << "persistent: as many clusters as fit";
  const Config small = select_config(300, 200, 64, 148, 256, Schedule::persistent);
  EXPECT_EQ(small.num_tiles, 2 * 1);
  EXPECT_EQ(small.grid_clusters, 2) << "never more clusters than tiles";
  EXPECT_EQ(select_config(4096, 4096, 4096, 148, 128).block_n, 128) << "an override wins";
  EXPECT_EQ(select_config(4096, 4096, 4096, 148, 80).block_n, select_config(4096, 4096, 4096, 148).block_n)
      << "an unknown width is ignored here (dispatch refuses it before)";
  // 4096 x 1152: 16 x 4.5 -> 80 tiles of 256x256 (74 + 6, a poor second wave)
  // against 16 x 9 = 144 tiles of 256x128 (74 + 70): the narrower tile wins.
  EXPECT_EQ(select_config(4096, 1152, 4096, 148).block_n, 128);
  // A narrow N at large M: 256- and 128-wide tiles both make one column of
  // 128 tiles; the 256-wide one would compute 4 times the output's columns.
  EXPECT_EQ(select_config(32768, 64, 4096, 148).block_n, 128);
  EXPECT_EQ(describe(clc), "256x256x64, 6 stages, cluster launch control");
  EXPECT_EQ(describe(per), "256x256x64, 6 stages, persistent");
  // Found by the API fuzzer: one pair cluster per tile cannot launch 2^30
  // tiles (2^31 CTAs, past CUDA's grid x-dimension): persistent there.
  const Config huge = select_config(int64_t{1} << 23, int64_t{1} << 23, 64, 148);
  EXPECT_EQ(huge.num_tiles, 1 << 30);
  EXPECT_EQ(huge.schedule, Schedule::persistent);
  EXPECT_EQ(huge.grid_clusters, 74);
  EXPECT_EQ(select_config(int64_t{1} << 23, (int64_t{1} << 23) - 256, 64, 148).schedule,
            Schedule::cluster_launch_control) << "2^30 - 2^15 tiles still fit";
}

// What Plan::config shows: one 256-row MMA over the CTA pair, never the
// sm90-only ping-pong, and a schedule that is never automatic.
TEST(Sm100SelectConfig, FillsThePublicFields) {
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    const Config c = select_config(4096, 4096, 4096, 148, tc.block_n, tc.schedule, tc.cta_group, true, 1,
                                   tc.cta_rows * tc.cta_group, tc.swap_ab);
    EXPECT_EQ(c.swap_ab, tc.swap_ab);
    EXPECT_EQ(c.block_m, tc.cta_rows * tc.cta_group);
    EXPECT_EQ(c.cta_rows(), tc.cta_rows);
    EXPECT_EQ(c.block_n, tc.block_n);
    EXPECT_EQ(c.block_k, kBlockK);
    EXPECT_EQ(c.stages, stages_for(tc.block_n, tc.cta_group, tc.cta_rows, tc.swap_ab));
    EXPECT_EQ(c.cluster_m, tc.cta_group);
    EXPECT_FALSE(c.pingpong);
    EXPECT_EQ(c.schedule, tc.schedule);
  }
  EXPECT_EQ(select_config(4096, 4096, 4096, 148).schedule, Schedule::cluster_launch_control);
}

// M <= 128 (decoding): single-CTA tiles (64 rows for M <= 64, 128 above),
// persistent, the fewest waves over the SMs and the narrower among equals;
// not when Cluster Launch Control or the pair tiles are asked for.
TEST(Sm100SelectConfig, SmallMTakesSingleCtaTiles) {
  struct Pick {
    int64_t m, n;
    int block_n;
  };
  // B200: 148 SMs. N = 4096: 128 tiles of 32 (one wave; 64, 128 and 256
  // too, 16 takes two): 32. 14336: 112 of 128 (one wave; 64 takes two): 128.
  // 57344: 224 of 256 (two waves; 128 takes four): 256.
  for (const Pick& p : {Pick{1, 4096, 32}, Pick{128, 4096, 32}, Pick{1, 14336, 128}, Pick{16, 57344, 256}}) {
    const Config c = select_config(p.m, p.n, 4096, 148);
    EXPECT_EQ(c.cluster_m, 1) << p.m << "x" << p.n;
    EXPECT_EQ(c.block_m, p.m <= 64 ? 64 : 128);
    EXPECT_EQ(c.block_n, p.block_n) << p.m << "x" << p.n << " " << describe(c);
    EXPECT_EQ(c.schedule, Schedule::persistent);
    EXPECT_EQ(c.stages, stages_for(c.block_n, 1, c.block_m));
    EXPECT_EQ(c.grid_clusters, std::min(c.num_tiles, 148));
  }
  // M = 129 with 74 or more pair tiles (N = 16384: 64 of 256 x 256):
  // pairs. (With fewer the small-problem rule below takes single-CTA tiles.)
  EXPECT_EQ(select_config(129, 16384, 4096, 148).cluster_m, 2);
  EXPECT_EQ(select_config(16, 4096, 4096, 148, 0, Schedule::cluster_launch_control).cluster_m, 2);
  EXPECT_EQ(select_config(16, 4096, 4096, 148, 0, Schedule::automatic, 2).cluster_m, 2);
  // A width only single-CTA tiles have implies them at any M.
  EXPECT_EQ(select_config(4096, 4096, 4096, 148, 64).cluster_m, 1);
  EXPECT_EQ(select_config(4096, 4096, 4096, 148, 16).block_n, 16);
  // B stored MN-major: no single-CTA width below 64 (B is loaded in 64-wide panels).
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 0, Schedule::automatic, 0, false).block_n, 64);
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 32, Schedule::automatic, 0, false).block_n, 64);
  // The shared-memory arithmetic of a single-CTA stage: all of B's columns.
  EXPECT_EQ(stage_bytes(128, 1), (128 + 128) * 64 * 2);
  EXPECT_EQ(stage_bytes(128, 2), (128 + 64) * 64 * 2);
  for (int w : {16, 32, 48, 64, 96, 128, 256}) EXPECT_LE(smem_bytes(w, stages_for(w, 1), 1), kSmemLimit) << w;
}

// 48 and 96 wide: where they make fewer waves than the powers of two, or as
// few and are narrower. B200, 148 SMs, M <= 128 (one block-row).
TEST(Sm100SelectConfig, SingleCtaWidths48And96) {
  struct Pick {
    int64_t m, n;
    int block_n;
  };
  // 6144: 128 tiles of 48 (one wave; 32 takes two: 192 tiles; 64 one, 96
  // tiles): 48. 12288: 128 of 96 (one wave; 64 takes two: 192; 128 one, 96
  // tiles): 96. 4608: 144 of 32 (one wave; narrower than 48's 96 tiles): 32.
  // 9216: 96 of 96 (one wave), 144 of 64 (one wave, narrower): 64.
  for (const Pick& p : {Pick{1, 6144, 48}, Pick{64, 6144, 48}, Pick{1, 12288, 96}, Pick{128, 12288, 96},
                        Pick{1, 4608, 32}, Pick{1, 9216, 64}}) {
    const Config c = select_config(p.m, p.n, 4096, 148);
    EXPECT_EQ(c.cluster_m, 1) << p.m << "x" << p.n;
    EXPECT_EQ(c.block_n, p.block_n) << p.m << "x" << p.n << " " << describe(c);
    EXPECT_EQ(c.num_tiles, static_cast<int>(ceil_div(p.n, p.block_n)));
    EXPECT_EQ(c.stages, stages_for(c.block_n, 1, c.cta_rows()));
  }
  // B stored MN-major: 48 and 96 are not built for it; 6144 and 12288 go
  // to the narrowest width with one wave that is: 64 (96 tiles) and 128 (96).
  EXPECT_EQ(select_config(1, 6144, 4096, 148, 0, Schedule::automatic, 0, false).block_n, 64);
  EXPECT_EQ(select_config(1, 12288, 4096, 148, 0, Schedule::automatic, 0, false).block_n, 128);
  // Forced: kept for B K-major, the automatic width for B MN-major (dispatch
  // refuses that call before: check_layout).
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 96).block_n, 96);
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 48, Schedule::automatic, 0, true).block_n, 48);
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 48, Schedule::automatic, 0, false).block_n, 64);
  // A width only single-CTA tiles have implies them at any M.
  const Config forced = select_config(4096, 4096, 4096, 148, 96);
  EXPECT_EQ(forced.cluster_m, 1);
  EXPECT_EQ(forced.block_m, 128);
  EXPECT_EQ(forced.num_tiles, 32 * 43);
  // A batch counts as more block-rows: 2 problems of 1 x 6144 make 256 tiles
  // of 48 (two waves), as 128 of 96 make one: 96.
  EXPECT_EQ(select_config(1, 6144, 4096, 148, 0, Schedule::automatic, 0, true, 2).block_n, 96);
}

// M <= 64: the 64-row single-CTA tiles (one tcgen05 MMA of M = 64), whose
// stages hold half the rows of A of the 128-row ones, so a deeper ring of B,
// and whose widths start at 8. The accumulator's rows sit in the first 16
// lanes of each epilogue warp's quarter of tensor memory (PTX ISA, layout F).
TEST(Sm100SelectConfig, SixtyFourRowTilesForMUpTo64) {
  for (int64_t m : {1, 8, 33, 64}) {
    const Config c = select_config(m, 4096, 4096, 148);
    EXPECT_EQ(c.block_m, 64) << m;
    EXPECT_EQ(c.cta_rows(), 64) << m;
    EXPECT_EQ(c.cluster_m, 1) << m;
    EXPECT_EQ(c.block_n, 32) << m << ": 128 tiles of 32, one wave (16: two)";
    EXPECT_EQ(c.stages, stages_for(32, 1, 64)) << m;
    EXPECT_EQ(c.num_tiles, 128) << m;
  }
  EXPECT_EQ(select_config(65, 4096, 4096, 148).block_m, 128) << "past 64 rows: the 128-row tiles";
  EXPECT_EQ(select_config(128, 4096, 4096, 148).block_m, 128);
  // The widths of the 64-row tiles: 8 spreads a small N over more SMs
  // (N = 256: 32 tiles of 8, one wave and the narrowest); 40 makes one wave
  // of N = 5120 (128 tiles) where 32 takes two (160).
  EXPECT_EQ(select_config(1, 256, 4096, 148).block_n, 8);
  EXPECT_EQ(select_config(16, 5120, 4096, 148).block_n, 40);
  EXPECT_EQ(select_config(16, 5120, 4096, 148, 0, Schedule::automatic, 0, false).block_n, 64)
      << "B MN-major: whole 64-column panels of B";
  // Stages: a 64 x 8 stage is 72 rows of 128 bytes; the 64-row ring is deeper at every width.
  EXPECT_EQ(stage_bytes(8, 1, 64), (64 + 8) * 64 * 2);
  EXPECT_EQ(epilogue_bytes(64), 4 * 2 * 16 * 64 * 2) << "16 rows a warp, 2 panels of 64 columns";
  EXPECT_EQ(epilogue_bytes(128), 4 * 2 * 32 * 64 * 2);
  for (int w : {16, 32, 48, 64, 96, 128, 256}) EXPECT_GT(stages_for(w, 1, 64), stages_for(w, 1, 128)) << w;
  EXPECT_GE(stages_for(8, 1, 64), 20);
  // Forced: a height (block_m 64 over several block-rows, 128 at M <= 64,
  // 256 = the pair tiles), a width built only 64 rows high (8 and 40: at any
  // M), or the CTA group with M <= 64.
  const Config tall = select_config(200, 4096, 4096, 148, 0, Schedule::automatic, 0, true, 1, 64);
  EXPECT_EQ(tall.block_m, 64);
  EXPECT_EQ(tall.num_tiles, 4 * static_cast<int>(ceil_div(4096, tall.block_n)));
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 0, Schedule::automatic, 0, true, 1, 128).block_m, 128);
  EXPECT_EQ(select_config(1, 4096, 4096, 148, 0, Schedule::automatic, 0, true, 1, 256).cluster_m, 2);
  const Config eight = select_config(300, 1024, 4096, 148, 8);
  EXPECT_EQ(eight.block_m, 64);
  EXPECT_EQ(eight.block_n, 8);
  EXPECT_EQ(eight.num_tiles, 5 * 128);
  EXPECT_EQ(select_config(300, 1024, 4096, 148, 40).block_m, 64);
  EXPECT_EQ(select_config(300, 1024, 4096, 148, 16).block_m, 128) << "16 is built 128 rows high too";
  EXPECT_EQ(select_config(32, 1024, 4096, 148, 16).block_m, 64);
  EXPECT_EQ(select_config(32, 4096, 4096, 148, 0, Schedule::automatic, 1).block_m, 64);
  EXPECT_EQ(describe(select_config(1, 256, 4096, 148)),
            "64x8x64, " + std::to_string(stages_for(8, 1, 64)) + " stages, persistent");
}

// Layout F (M = 64, cta_group::1): row r of the accumulator in lane 32 (r /
// 16) + r % 16, so that epilogue warp w (lanes 32w..32w+31, the only ones it
// may read) holds rows 16w..16w+15 in its lanes 0..15; 128 rows: lane = row.
TEST(Sm100Config, AccumulatorRowsInTheirEpilogueWarpsLanes) {
  for (int rows : {64, 128}) {
    SCOPED_TRACE("cta_rows=" + std::to_string(rows));
    EXPECT_EQ(epilogue_rows(rows), rows / 4);
    bool used[128] = {};
    for (int r = 0; r < rows; ++r) {
      const int lane = tmem_lane(r, rows);
      ASSERT_GE(lane, 0);
      ASSERT_LT(lane, 128);
      EXPECT_FALSE(used[lane]) << "row " << r << ": one row a lane";
      used[lane] = true;
      EXPECT_EQ(lane / 32, r / epilogue_rows(rows)) << "row " << r << " is read by the warp that stores it";
      EXPECT_EQ(lane % 32, r % epilogue_rows(rows)) << "row " << r << ": the warp's lane r % its rows";
    }
  }
  EXPECT_EQ(tmem_lane(16, 64), 32);
  EXPECT_EQ(tmem_lane(47, 64), 79);
  // The MMA shapes: M = 64 takes N in steps of 8 from 8 (M = 128 in steps of 16).
  EXPECT_TRUE(valid_1sm_mma_shape(64, 8));
  EXPECT_TRUE(valid_1sm_mma_shape(64, 40));
  EXPECT_TRUE(valid_1sm_mma_shape(64, 256));
  EXPECT_FALSE(valid_1sm_mma_shape(64, 12));
  EXPECT_FALSE(valid_1sm_mma_shape(64, 264));
  EXPECT_FALSE(valid_1sm_mma_shape(32, 64));
  const uint32_t d = instr_desc_f16(true, Major::K, Major::K, 64, 8);
  EXPECT_EQ(field(d, 24, 28), 64u >> 4);
  EXPECT_EQ(field(d, 17, 22), 1u);
  EXPECT_EQ(d, 0x04020490u) << "bf16, M=64, N=8, K-major";
}

// The swapped tiles (Sm100TileConfig::swap_ab): single-CTA, 128 of N a
// tile, persistent, a tcgen05 N in steps of 16. Forced (Options::swap_ab):
// the width asked for, else the narrowest holding M, else the widest; the
// kernel's tiles run along N by 128 and along M by the width. Never chosen
// automatically (not measured on a B200).
TEST(Sm100SelectConfig, SwappedTilesWhenForced) {
  int swapped = 0;
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    if (!tc.swap_ab) continue;
    ++swapped;
    SCOPED_TRACE("block_n=" + std::to_string(tc.block_n));
    EXPECT_EQ(tc.cta_group, 1);
    EXPECT_EQ(tc.cta_rows, 128);
    EXPECT_EQ(tc.schedule, Schedule::persistent);
    EXPECT_TRUE(valid_1sm_mma_shape(128, tc.block_n));
    EXPECT_FALSE(is_tile_width(tc.block_n)) << "a swapped width is not also an unswapped one";
  }
  EXPECT_EQ(swapped, 5);
  struct Forced {
    int64_t m, n;
    int block_n_asked, width;
    int64_t batch;
  };
  for (const Forced& f : {Forced{150, 14336, 0, 160, 1}, Forced{144, 14336, 0, 144, 1}, Forced{1, 4096, 0, 144, 1},
                          Forced{300, 14336, 0, 224, 1}, Forced{100, 4096, 208, 208, 1}, Forced{520, 8192, 176, 176, 3},
                          Forced{200, 4096, 136, 208, 1}}) {
    const Config c = select_config(f.m, f.n, 4096, 148, f.block_n_asked, Schedule::automatic, 0, true, f.batch, 0, true);
    SCOPED_TRACE(std::to_string(f.m) + " x " + std::to_string(f.n) + " asked " + std::to_string(f.block_n_asked));
    EXPECT_TRUE(c.swap_ab);
    EXPECT_EQ(c.block_m, 128);
    EXPECT_EQ(c.block_n, f.width);
    EXPECT_EQ(c.cluster_m, 1);
    EXPECT_EQ(c.schedule, Schedule::persistent);
    EXPECT_EQ(c.stages, stages_for(f.width, 1, 128, true));
    const int64_t tiles = ceil_div(f.n, 128) * ceil_div(f.m, f.width) * f.batch;
    EXPECT_EQ(c.num_tiles, tiles);
    EXPECT_EQ(c.grid_clusters, std::min<int64_t>(tiles, 148));
    EXPECT_NE(describe(c).find(", swapped (C^T = B^T A^T)"), std::string::npos) << describe(c);
  }
  for (int64_t m = 1; m <= 1024; m += 37)
    for (int64_t n : {4096, 14336, 57344})
      for (bool b_k_major : {true, false}) {
        const Config c = select_config(m, n, 4096, 148, 0, Schedule::automatic, 0, b_k_major);
        EXPECT_FALSE(c.swap_ab) << m << " x " << n;
        EXPECT_EQ(describe(c).find("swapped"), std::string::npos) << describe(c);
      }
}

// Small problems: where the pair tiles chosen would occupy half the SMs or
// fewer (at most num_sms / 4 tiles), single-CTA tiles at the M <= 128
// rule's width; not where a width, a CTA group or Cluster Launch Control is
// forced.
TEST(Sm100SelectConfig, SmallProblemsTakeSingleCtaTiles) {
  // 256^3: one 256 x 256 pair tile (2 of 148 SMs); 2 x 16 = 32 single-CTA
  // tiles 16 wide make one wave, the narrowest that does.
  const Config c256 = select_config(256, 256, 256, 148);
  EXPECT_EQ(c256.cluster_m, 1) << describe(c256);
  EXPECT_EQ(c256.block_m, 128);
  EXPECT_EQ(c256.block_n, 16);
  EXPECT_EQ(c256.num_tiles, 32);
  EXPECT_EQ(c256.grid_clusters, 32);
  EXPECT_EQ(c256.schedule, Schedule::persistent);
  // 512^3: 4 pair tiles; 4 x 32 = 128 tiles of 16 (one wave).
  const Config c512 = select_config(512, 512, 512, 148);
  EXPECT_EQ(c512.cluster_m, 1);
  EXPECT_EQ(c512.block_n, 16);
  EXPECT_EQ(c512.num_tiles, 128);
  // B MN-major: the widths built for it; 256^3 on 64-wide tiles (8 of them).
  const Config nn = select_config(256, 256, 256, 148, 0, Schedule::automatic, 0, false);
  EXPECT_EQ(nn.cluster_m, 1);
  EXPECT_EQ(nn.block_n, 64);
  // The boundary, M = 256 on 148 SMs (74 pairs at once): N = 4736 is 37
  // pair tiles of 128 (the pick: 19 of 256 fill less), half the pairs:
  // single-CTA tiles, 2 x 74 = 148 of 64 (one wave). N = 4864 is 38 pair
  // tiles: pairs.
  const Config at = select_config(256, 4736, 4096, 148);
  EXPECT_EQ(at.cluster_m, 1) << describe(at);
  EXPECT_EQ(at.block_n, 64);
  EXPECT_EQ(at.num_tiles, 148);
  const Config past = select_config(256, 4864, 4096, 148);
  EXPECT_EQ(past.cluster_m, 2) << describe(past);
  EXPECT_EQ(past.block_n, 128);
  EXPECT_EQ(past.num_tiles, 38);
  // M = 129 (the pairs' second CTA idle): 32 pair tiles of 128 at N = 4096,
  // single-CTA tiles instead: 2 x 64 = 128 of 64.
  const Config m129 = select_config(129, 4096, 4096, 148);
  EXPECT_EQ(m129.cluster_m, 1);
  EXPECT_EQ(m129.block_n, 64);
  // 1024^3: 32 pair tiles of 128 (they fill more pairs than 16 of 256), 64
  // SMs: single-CTA tiles, 8 x 16 = 128 of 64. 2048^3: 64 pair tiles of 256:
  // pairs.
  const Config c1024 = select_config(1024, 1024, 1024, 148);
  EXPECT_EQ(c1024.cluster_m, 1);
  EXPECT_EQ(c1024.block_n, 64);
  EXPECT_EQ(c1024.num_tiles, 128);
  const Config c2048 = select_config(2048, 2048, 2048, 148);
  EXPECT_EQ(c2048.cluster_m, 2);
  EXPECT_EQ(c2048.block_n, 256);
  EXPECT_EQ(c2048.num_tiles, 64);
  // A batch counts: 64 problems of 256^3 are 64 pair tiles, more than half of 74.
  const Config many = select_config(256, 256, 256, 148, 0, Schedule::automatic, 0, true, 64);
  EXPECT_EQ(many.cluster_m, 2);
  EXPECT_EQ(many.num_tiles, 64);
  const Config few = select_config(256, 256, 256, 148, 0, Schedule::automatic, 0, true, 4);
  EXPECT_EQ(few.cluster_m, 1);
  EXPECT_EQ(few.block_n, 16);
  EXPECT_EQ(few.num_tiles, 4 * 2 * 16) << "4 problems x 2 block-rows x 16 tiles of 16: one wave";
  // Forced options are honoured: a width, the pair CTA group, Cluster Launch
  // Control keep the pair tiles; a persistent schedule is the single-CTA
  // tiles' own, so it still gets them (as at M <= 128).
  EXPECT_EQ(select_config(256, 256, 256, 148, 256).cluster_m, 2);
  EXPECT_EQ(select_config(256, 256, 256, 148, 128).cluster_m, 2);
  EXPECT_EQ(select_config(256, 256, 256, 148, 0, Schedule::automatic, 2).cluster_m, 2);
  const Config clc = select_config(256, 256, 256, 148, 0, Schedule::cluster_launch_control);
  EXPECT_EQ(clc.cluster_m, 2);
  EXPECT_EQ(clc.schedule, Schedule::cluster_launch_control);
  const Config per = select_config(256, 256, 256, 148, 0, Schedule::persistent);
  EXPECT_EQ(per.cluster_m, 1);
  EXPECT_EQ(per.schedule, Schedule::persistent);
  EXPECT_EQ(select_config(256, 256, 256, 148, 16).block_n, 16) << "a single-CTA width forced";
}

// Found by the API fuzzer: M = N = 2^31-1 passes validation (each size fits
// 32 bits) but its tile count does not; both families refuse it (the call
// then goes to the fallback) instead of launching with overflowed indices.
TEST(CanImplement, RefusesTileCountsBeyond32Bits) {
  GemmArgs g;
  g.m = g.n = (int64_t{1} << 31) - 1;
  g.k = 64;
  g.lda = g.ldb = g.ldc = int64_t{1} << 31;
  g.a = g.b = g.c = reinterpret_cast<void*>(uintptr_t{1} << 40);
  EXPECT_NE(can_implement(g).find("32-bit tile indices"), std::string::npos) << can_implement(g);
  EXPECT_NE(sm90::can_implement(g).find("32-bit tile indices"), std::string::npos) << sm90::can_implement(g);
  g.m = g.n = 1 << 20;  // 4096 x 16384 tiles of 256 x 64: fits
  EXPECT_EQ(can_implement(g).find("32-bit tile indices"), std::string::npos);
  EXPECT_TRUE(detail::tile_count_fits_int32(1 << 20, 1 << 20, 128, 64));
  EXPECT_FALSE(detail::tile_count_fits_int32((int64_t{1} << 31) - 1, 1 << 20, 128, 64));
}

}  // namespace
}  // namespace tcgemm::sm100
