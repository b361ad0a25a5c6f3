// GroupedRaster: the persistent kernel trusts it to visit every tile exactly
// once; a tile visited twice is a race on C, a tile never visited stays NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "common/tile_order.hpp"

namespace tcgemm::detail {
namespace {

std::string describe(const GroupedRaster& r) {
  std::ostringstream s;
  s << "m_blocks=" << r.num_m_blocks << " n_blocks=" << r.num_n_blocks << " group_m=" << r.group_m;
  return s.str();
}

// Grids with ragged last groups (m_blocks not a multiple of group_m), single
// rows and columns, group_m larger than the grid, and realistic sizes.
std::vector<GroupedRaster> grids() {
  std::vector<GroupedRaster> out;
  for (int mb = 1; mb <= 19; ++mb)
    for (int nb = 1; nb <= 13; ++nb)
      for (int g : {1, 2, 3, 5, 8, 16}) out.push_back({mb, nb, g});
  out.push_back({64, 32, 8});   // 8192 x 8192 with 128 x 256 tiles
  out.push_back({64, 64, 8});   // 8192 x 8192 with 128 x 128 tiles
  out.push_back({1000, 3, 8});  // tall
  out.push_back({3, 1000, 8});  // wide
  out.push_back({129, 67, 7});  // both ragged
  return out;
}

TEST(GroupedRaster, IsABijectionOntoTheTileGrid) {
  for (const auto& r : grids()) {
    SCOPED_TRACE(describe(r));
    ASSERT_EQ(r.num_tiles(), r.num_m_blocks * r.num_n_blocks);
    std::vector<int> visits(static_cast<size_t>(r.num_tiles()), 0);
    for (int i = 0; i < r.num_tiles(); ++i) {
      const TileCoord t = r.tile(i);
      ASSERT_GE(t.m_block, 0) << "index " << i;
      ASSERT_LT(t.m_block, r.num_m_blocks) << "index " << i;
      ASSERT_GE(t.n_block, 0) << "index " << i;
      ASSERT_LT(t.n_block, r.num_n_blocks) << "index " << i;
      ++visits[static_cast<size_t>(t.m_block * r.num_n_blocks + t.n_block)];
    }
    for (int m = 0; m < r.num_m_blocks; ++m)
      for (int n = 0; n < r.num_n_blocks; ++n)
        ASSERT_EQ(visits[static_cast<size_t>(m * r.num_n_blocks + n)], 1) << "tile m_block=" << m << " n_block=" << n;
  }
}

// The documented order, enumerated independently: groups of group_m
// block-rows in turn; inside a group n_block outer, m_block inner.
TEST(GroupedRaster, MatchesTheDocumentedOrder) {
  for (const auto& r : grids()) {
    SCOPED_TRACE(describe(r));
    int index = 0;
    for (int first_m = 0; first_m < r.num_m_blocks; first_m += r.group_m) {
      const int last_m = std::min(first_m + r.group_m, r.num_m_blocks);
      for (int n = 0; n < r.num_n_blocks; ++n)
        for (int m = first_m; m < last_m; ++m, ++index) {
          const TileCoord t = r.tile(index);
          ASSERT_EQ(t.m_block, m) << "index " << index;
          ASSERT_EQ(t.n_block, n) << "index " << index;
        }
    }
    ASSERT_EQ(index, r.num_tiles());
  }
}

TEST(GroupedRaster, MVariesFastestWithinAGroup) {
  for (const auto& r : grids()) {
    SCOPED_TRACE(describe(r));
    for (int i = 0; i + 1 < r.num_tiles(); ++i) {
      const TileCoord a = r.tile(i), b = r.tile(i + 1);
      const int group_a = a.m_block / r.group_m, group_b = b.m_block / r.group_m;
      if (group_a != group_b) {
        // Moving to the next group: it starts at its first row, first column.
        ASSERT_EQ(group_b, group_a + 1) << "index " << i;
        ASSERT_EQ(b.m_block, group_b * r.group_m) << "index " << i;
        ASSERT_EQ(b.n_block, 0) << "index " << i;
        ASSERT_EQ(a.n_block, r.num_n_blocks - 1) << "index " << i;
      } else if (b.n_block == a.n_block) {
        ASSERT_EQ(b.m_block, a.m_block + 1) << "index " << i;
      } else {
        // Next column of the group: back to the group's first row.
        ASSERT_EQ(b.n_block, a.n_block + 1) << "index " << i;
        ASSERT_EQ(b.m_block, group_a * r.group_m) << "index " << i;
      }
    }
  }
}

// A wave of consecutive tiles stays inside one group's group_m block-rows
// (except where it crosses into the next group), which is the L2 argument.
TEST(GroupedRaster, ConsecutiveTilesStayWithinGroupRows) {
  for (const auto& r : grids()) {
    SCOPED_TRACE(describe(r));
    const int tiles_per_group = r.group_m * r.num_n_blocks;
    for (int i = 0; i < r.num_tiles(); ++i) {
      const int group = i / tiles_per_group;
      const TileCoord t = r.tile(i);
      ASSERT_GE(t.m_block, group * r.group_m) << "index " << i;
      ASSERT_LT(t.m_block, (group + 1) * r.group_m) << "index " << i;
    }
  }
}

// The persistent loop: worker c takes tiles c, c + num_workers, ... Together
// the workers cover each tile once for any grid size, each in increasing order.
TEST(PersistentSchedule, CoversEveryTileOnce) {
  const GroupedRaster r{37, 11, 8};
  for (int num_workers : {1, 7, 132, 407, 500}) {
    SCOPED_TRACE("num_workers=" + std::to_string(num_workers));
    std::vector<int> visits(static_cast<size_t>(r.num_tiles()), 0);
    for (int w = 0; w < num_workers; ++w) {
      const PersistentSchedule s{w, num_workers, r.num_tiles()};
      int previous = -1;
      for (int j = 0; s.tile(j) >= 0; ++j) {
        ASSERT_GT(s.tile(j), previous);
        previous = s.tile(j);
        const TileCoord t = r.tile(s.tile(j));
        ++visits[static_cast<size_t>(t.m_block * r.num_n_blocks + t.n_block)];
      }
    }
    for (int v : visits) ASSERT_EQ(v, 1);
  }
}

TEST(PersistentSchedule, EndsWithMinusOne) {
  const PersistentSchedule s{3, 10, 25};
  EXPECT_EQ(s.tile(0), 3);
  EXPECT_EQ(s.tile(2), 23);
  EXPECT_EQ(s.tile(3), -1);
  EXPECT_EQ((PersistentSchedule{30, 132, 25}.tile(0)), -1) << "a worker beyond the tiles has none";
}

// load_hints marks an operand evict-first exactly where the walk loads each of
// its tiles once: counted here by walking every tile of the grid, batch by
// batch, with the operand's matrix per problem (step 1) or one repeated for
// every problem (step 0).
TEST(LoadHints, MarkExactlyTheOperandsEveryTileOfWhichIsLoadedOnce) {
  constexpr int64_t kL2 = int64_t{50} << 20;
  for (GroupedRaster r : grids()) {
    if (r.num_m_blocks > 20 || r.num_n_blocks > 20) continue;
    for (int batch : {1, 2, 5})
      for (int step_a : {0, 1})
        for (int step_b : {0, 1}) {
          if (batch == 1 && (step_a == 1 || step_b == 1)) continue;  // (a plain call's steps are 0)
          r.batch = batch;
          const BatchSteps steps{step_a, step_b};
          std::vector<int> a_loads(static_cast<size_t>(batch * r.num_m_blocks)),
              b_loads(static_cast<size_t>(batch * r.num_n_blocks));
          for (int i = 0; i < r.num_tiles(); ++i) {
            const TileCoord t = r.tile(i);
            ++a_loads[static_cast<size_t>(t.batch * steps.a * r.num_m_blocks + t.m_block)];
            ++b_loads[static_cast<size_t>(t.batch * steps.b * r.num_n_blocks + t.n_block)];
          }
          const auto once = [](const std::vector<int>& loads) {
            return std::all_of(loads.begin(), loads.end(), [](int n) { return n <= 1; });
          };
          const LoadHints h = load_hints(r, steps, false, 1, 1, 1, kL2);
          EXPECT_EQ(h.a_evict_first != 0, once(a_loads)) << describe(r) << " batch=" << batch << " step_a=" << step_a;
          EXPECT_EQ(h.b_evict_first != 0, once(b_loads)) << describe(r) << " batch=" << batch << " step_b=" << step_b;
          const LoadHints grouped = load_hints(r, steps, true, 1, 1, 1, kL2);
          EXPECT_EQ(grouped.a_evict_first, 0) << "an M-grouped call: none";
          EXPECT_EQ(grouped.b_evict_first, 0) << "an M-grouped call: none";
        }
  }
}

// ... and only where the operand is at most kReadOnceMaxL2Multiple times the
// L2, whose size must be known: a decoding call (one block-row) against
// weights of 4096 x 11008 (90 MB) and 8192 x 28672 (470 MB) on a 50 MiB L2.
TEST(LoadHints, OnlyForOperandsOfAFewTimesTheL2) {
  constexpr int64_t kL2 = int64_t{50} << 20;
  const GroupedRaster decode{1, 64, 8, 1};
  const BatchSteps plain{0, 0};
  EXPECT_EQ(load_hints(decode, plain, false, 16, 4096, 11008, kL2).b_evict_first, 1);
  EXPECT_EQ(load_hints(decode, plain, false, 16, 8192, 28672, kL2).b_evict_first, 0)
      << "470 MB of weights: more than 4 x 50 MiB";
  static_assert(int64_t{10240} * 10240 * 2 == kReadOnceMaxL2Multiple * (int64_t{50} << 20), "the bound exactly");
  EXPECT_EQ(load_hints(decode, plain, false, 16, 10240, 10240, kL2).b_evict_first, 1) << "the bound itself is included";
  EXPECT_EQ(load_hints(decode, plain, false, 16, 4096, 11008, 0).b_evict_first, 0) << "an L2 of unknown size: no hints";
  // A batch's operand counts every problem's matrix, a repeated one its one matrix.
  EXPECT_EQ(operand_bytes(64, 4096, 2, 32, 1), int64_t{64} * 4096 * 2 * 32);
  EXPECT_EQ(operand_bytes(64, 4096, 2, 32, 0), int64_t{64} * 4096 * 2);
}

TEST(CeilDiv, RoundsUp) {
  EXPECT_EQ(ceil_div(0, 128), 0);
  EXPECT_EQ(ceil_div(1, 128), 1);
  EXPECT_EQ(ceil_div(128, 128), 1);
  EXPECT_EQ(ceil_div(129, 128), 2);
  EXPECT_EQ(ceil_div(8192, 256), 32);
  EXPECT_EQ(ceil_div(int64_t{1} << 31, 128), 1 << 24);
}

}  // namespace
}  // namespace tcgemm::detail
