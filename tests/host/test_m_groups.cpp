// The M-grouped GEMM's arithmetic (common/m_groups.hpp) and its host-side
// checks: the kernel trusts locate() to give every row of every group to
// exactly one tile of its own group (a row given twice is a race on C, a row
// never given stays unwritten), the grid's bound to cover every slot, the
// configuration choice, and validation to refuse what the kernels cannot take.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "common/host/validate.hpp"
#include "common/m_groups.hpp"
#include "sm100/sm100_config.hpp"
#include "sm90/sm90_config.hpp"

namespace tcgemm::detail {
namespace {

// The slot table as the kernels build it: the first slot of every group, then all slots.
std::vector<int> slot_table(const MGroups& groups, int block_m) {
  std::vector<int> first(static_cast<size_t>(groups.count) + 1, 0);
  slot_table_host(groups, first.data(), block_m);
  return first;
}

std::string describe(const std::vector<int32_t>& ends, int m, int block_m) {
  std::string s = "m=" + std::to_string(m) + " block_m=" + std::to_string(block_m) + " ends=";
  for (size_t g = 0; g < ends.size(); ++g) {
    if (g > 0) s += ',';
    s += std::to_string(ends[g]);
  }
  return s;
}

// Every row below the last (clamped) end is in exactly one slot of its own
// group, and no slot stores a row of another group or past M.
void expect_rows_covered_once(const std::vector<int32_t>& ends, int m, int block_m) {
  SCOPED_TRACE(describe(ends, m, block_m));
  const MGroups groups{ends.data(), static_cast<int>(ends.size()), m};
  const std::vector<int> first = slot_table(groups, block_m);
  const int slots = first.back();
  EXPECT_LE(slots, max_group_slots(m, groups.count, block_m));
  std::vector<int> stored(static_cast<size_t>(m), 0);
  for (int slot = 0; slot < slots; ++slot) {
    const GroupRows r = locate(groups, first.data(), slot, block_m);
    ASSERT_GE(r.group, 0);
    ASSERT_LT(r.group, groups.count);
    EXPECT_EQ(r.row_end, groups.end(r.group));
    EXPECT_GE(r.row0, groups.start(r.group)) << "slot " << slot;
    EXPECT_LT(r.row0, r.row_end) << "slot " << slot << ": a slot with no row to store";
    for (int row = r.row0; row < std::min(r.row0 + block_m, r.row_end); ++row) {
      ASSERT_LT(row, m);
      ++stored[static_cast<size_t>(row)];
    }
  }
  for (int row = 0; row < m; ++row) {
    const int g = group_of_row(groups, row);
    EXPECT_EQ(stored[static_cast<size_t>(row)], g < 0 ? 0 : 1) << "row " << row << " (group " << g << ")";
  }
}

TEST(MGroups, EveryRowOfEveryGroupInExactlyOneSlot) {
  for (int block_m : {64, 128}) {
    expect_rows_covered_once({0, 1, 131, 195, 195, 452, 457}, 460, block_m);
    expect_rows_covered_once({200}, 200, block_m);
    expect_rows_covered_once({0}, 10, block_m);            // no rows at all
    expect_rows_covered_once({128, 256, 384}, 384, block_m);  // whole tiles
    expect_rows_covered_once({-5, 10, 10, 1000000}, 150, block_m);  // clamped into [0, M]
  }
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    const int count = 1 + static_cast<int>(rng() % kMaxGroups);
    std::vector<int32_t> ends(static_cast<size_t>(count));
    int32_t end = 0;
    for (auto& e : ends) e = end += static_cast<int32_t>(rng() % (trial % 2 ? 300 : 20));
    expect_rows_covered_once(ends, end + static_cast<int>(rng() % 7), trial % 3 ? 128 : 64);
  }
}

TEST(MGroups, DecreasingEndsMakeNoSlot) {
  // Ends that decrease after clamping would make groups overlap (and, over
  // 256 groups, more slots than the host's bound): the call writes nothing.
  for (const std::vector<int32_t>& ends : {std::vector<int32_t>{50, 20, 90, 60, 400}, std::vector<int32_t>{100, 0, 100},
                                           std::vector<int32_t>{10, 9}}) {
    const MGroups groups{ends.data(), static_cast<int>(ends.size()), 100};
    EXPECT_FALSE(groups.ordered());
    const std::vector<int> first = slot_table(groups, 64);
    EXPECT_TRUE(std::all_of(first.begin(), first.end(), [](int s) { return s == 0; }));
    for (int row = 0; row < 100; ++row) EXPECT_EQ(group_of_row(groups, row), -1) << row;
  }
  // Clamping first: past M and below 0 are in order once clamped.
  const std::vector<int32_t> clamped = {-3, 500, 100};
  EXPECT_TRUE((MGroups{clamped.data(), 3, 100}.ordered()));
}

TEST(MGroups, ConfigurationByRowsPerGroup) {
  // At most 32 rows a group on average: the 64-row tile.
  const sm90::Config decode = sm90::select_grouped_config(8 * 32, 28672, 4096, 8, 132);
  EXPECT_EQ(decode.block_m, 64);
  EXPECT_EQ(decode.block_n, 128);
  // 33 to 128: 128 x 256 where its tiles make 4 waves (8 x 112 tiles at N = 28672)...
  for (int64_t rows : {64, 128}) {
    const sm90::Config mid = sm90::select_grouped_config(8 * rows, 28672, 4096, 8, 132);
    EXPECT_EQ(mid.block_n, 256) << rows;
    EXPECT_FALSE(mid.pingpong) << rows;
  }
  // ... not where they make fewer (8 x 16 tiles at N = 4096): ping-pong 128 x 128.
  const sm90::Config few = sm90::select_grouped_config(8 * 128, 4096, 14336, 8, 132);
  EXPECT_EQ(few.block_n, 128);
  EXPECT_TRUE(few.pingpong);
  // More than 128: ping-pong 128 x 128.
  EXPECT_TRUE(sm90::select_grouped_config(128 * 256, 1536, 2048, 128, 132).pingpong);
  const sm90::Config prefill = sm90::select_grouped_config(8 * 1024, 28672, 4096, 8, 132);
  EXPECT_EQ(prefill.block_m, 128);
  EXPECT_EQ(prefill.block_n, 128);
  EXPECT_TRUE(prefill.pingpong);
  EXPECT_EQ(prefill.num_ctas, 132);
  // A forced configuration of kGroupedTileConfigs is taken.
  const sm90::Config wide = sm90::select_grouped_config(4096, 4096, 4096, 8, 132, 256);
  EXPECT_EQ(wide.block_n, 256);
  EXPECT_FALSE(wide.pingpong);
  // The grid covers the most slots the groups can take, at most one CTA per SM.
  const sm90::Config tiny = sm90::select_grouped_config(3, 128, 64, 2, 132);
  EXPECT_EQ(tiny.num_ctas, static_cast<int>(max_group_slots(3, 2, tiny.block_m)));
  EXPECT_EQ(sm90::grouped_tile_config(64, 0, false), nullptr);
  EXPECT_NE(sm90::grouped_tile_config(128, 64, false), nullptr);
}

TEST(MGroups, Sm100ConfigurationByRowsPerGroup) {
  // The sm90 rule carried over to the single-CTA tiles: 128 wide up to 32 rows a group...
  const sm100::Config decode = sm100::select_grouped_config(8 * 32, 28672, 4096, 8, 148);
  EXPECT_EQ(decode.block_n, 128);
  EXPECT_EQ(decode.cluster_m, 1);
  EXPECT_EQ(decode.schedule, Schedule::persistent);
  // ... 256 wide beyond, where its tiles make 4 waves (8 x 1 x 112 at N = 28672), else 128.
  EXPECT_EQ(sm100::select_grouped_config(8 * 128, 28672, 4096, 8, 148).block_n, 256);
  EXPECT_EQ(sm100::select_grouped_config(8 * 128, 4096, 14336, 8, 148).block_n, 128);
  const sm100::Config forced = sm100::select_grouped_config(8 * 32, 28672, 4096, 8, 148, 256);
  EXPECT_EQ(forced.block_n, 256);
  EXPECT_EQ(forced.stages, sm100::grouped_stages_for(256));
  EXPECT_EQ(forced.grid_clusters, 148);
  EXPECT_EQ(forced.num_tiles, static_cast<int>(max_group_slots(8 * 32, 8, 128) * 112));
  // The ring beside the slot table: as deep as fits, at most one stage less than the plain tile's.
  for (int w : kSm100GroupedWidths) {
    EXPECT_LE(sm100::smem_bytes(w, sm100::grouped_stages_for(w), 1) + kSlotTableBytes, sm100::kSmemLimit);
    EXPECT_GE(sm100::grouped_stages_for(w), sm100::stages_for(w, 1) - 1);
  }
}

GemmArgs grouped_args() {
  GemmArgs g;
  g.dtype = DType::bf16;
  g.op_a = Op::N;
  g.op_b = Op::T;
  g.m = 100;
  g.n = 64;
  g.k = 32;
  g.a = reinterpret_cast<const void*>(uintptr_t{0x10000});
  g.lda = 32;
  g.b = reinterpret_cast<const void*>(uintptr_t{0x20000});
  g.ldb = 32;
  g.stride_b = 64 * 32;
  g.c = reinterpret_cast<void*>(uintptr_t{0x30000});
  g.ldc = 64;
  g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x40000});
  g.groups = 4;
  return g;
}

TEST(MGroups, ValidationNamesWhatIsWrong) {
  EXPECT_EQ(check_args(grouped_args()), "");
  const struct {
    const char* says;
    void (*edit)(GemmArgs&);
  } cases[] = {
      {"groups must not be negative", [](GemmArgs& g) { g.groups = -1; }},
      {"at most 256 groups", [](GemmArgs& g) { g.groups = 257; }},
      {"batch must be 1", [](GemmArgs& g) { g.batch = 3; }},
      {"op_a = N", [](GemmArgs& g) {
         g.op_a = Op::T;
         g.lda = 100;
       }},
      {"no fused epilogue", [](GemmArgs& g) { g.activation = Activation::relu; }},
      {"stride_b must not be negative", [](GemmArgs& g) { g.stride_b = -1; }},
      {"overflows 64-bit", [](GemmArgs& g) { g.stride_b = int64_t{1} << 62; }},
      {"group_ends is a null pointer", [](GemmArgs& g) { g.group_ends = nullptr; }},
      {"4-byte", [](GemmArgs& g) { g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x40002}); }},
      // Every tile reads the ends while others store C: not inside C (its 100 rows of 64 from 0x30000).
      {"C overlaps group_ends",
       [](GemmArgs& g) { g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x30080}); }},
      {"C overlaps group_ends",
       [](GemmArgs& g) { g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x30000 + 99 * 128 + 120}); }},
  };
  for (const auto& c : cases) {
    GemmArgs g = grouped_args();
    c.edit(g);
    const std::string why = check_args(g);
    EXPECT_NE(why.find(c.says), std::string::npos) << c.says << ": " << why;
    EXPECT_NE(why.find("groups="), std::string::npos) << "the case is described: " << why;
  }
  // The ends right after C's last element, or in the gap of a C whose rows are apart: accepted.
  GemmArgs g = grouped_args();
  g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x30000 + 100 * 128});
  EXPECT_EQ(check_args(g), "");
  g.ldc = 72;
  g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x30000 + 64 * 2});
  EXPECT_EQ(check_args(g), "");
  g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x30000 + 64 * 2 + 4});  // 4 ends, 16 bytes: row 1's first
  EXPECT_NE(check_args(g).find("C overlaps group_ends"), std::string::npos);
}

}  // namespace
}  // namespace tcgemm::detail
