// The M-grouped GEMM's rows (GemmArgs::groups, group_ends: a mixture of
// experts' tokens sorted by expert). Group g takes the rows [start(g),
// end(g)) of A and C and multiplies them by its own B_g. The ends are read on
// the device, where the kernel finds them (no copy to the host, so a call can
// be captured in a CUDA graph while a previous kernel computes them): every
// value is clamped into [0, M] there, and ends that still decrease somewhere
// (groups that would overlap) make the whole call write nothing, there being
// no way to report it from the device. No value of them can make a row
// outside A or C addressed, or the slots number more than the host's bound.
//
// The kernel cuts each group into its own tiles of block_m rows ("slots"):
// group g's slots are the block_m-row blocks [start(g) + i * block_m, ...)
// for i < ceil(rows(g) / block_m), numbered after every slot of the groups
// before it. A table of the first slot of every group (first_slot[g], g =
// 0 .. groups; first_slot[groups] = all slots) is built once per CTA in shared
// memory, and a tile's slot is found in it by binary search (locate). A
// group's last slot may run past its end into the next group's rows: those
// rows are loaded (they are A's, or zeros past M) and multiplied but never
// stored, so every row of C is written by the one tile of its own group,
// with the same in-order sum as in a plain call.
//
// Pure arithmetic, usable on host and device: tests/host checks that the
// slots cover every row of every group exactly once.
#pragma once

#include <cstdint>

#include "common/tile_order.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// The most groups a call may have (tcgemm::kMaxGroups) is set by the slot
// table: it lives in static shared memory, (kMaxGroups + 1) 4-byte entries,
// kSlotTableBytes as ptxas places it (16-byte granules), in the 1-2 KiB that
// the sm90 128-row tiles' rings leave unused.
inline constexpr int kSlotTableBytes = ((kMaxGroups + 1) * 4 + 15) / 16 * 16;

struct MGroups {
  const int32_t* ends = nullptr;  // `count` entries on the device; null when the call has no groups
  int count = 0;                  // GemmArgs::groups; 0: a plain call
  int m = 0;                      // rows of A and C: every end is clamped into [0, m]

  // Group g's first and one-past-last row (end(g - 1) and ends[g], clamped).
  TCGEMM_HD int end(int g) const {
    const int e = ends[g];
    return e < 0 ? 0 : e > m ? m : e;
  }
  TCGEMM_HD int start(int g) const { return g == 0 ? 0 : end(g - 1); }
  // Slots of block_m rows group g takes (0 for an empty group; the ends
  // decrease at g where it would be negative).
  TCGEMM_HD int slots(int g, int block_m) const {
    const int rows = end(g) - start(g);
    return rows <= 0 ? 0 : (rows + block_m - 1) / block_m;
  }
  // Whether the clamped ends never decrease: the call computes anything at all.
  TCGEMM_HD bool ordered() const {
    for (int g = 1; g < count; ++g)
      if (end(g) < end(g - 1)) return false;
    return true;
  }
};

// The group of row `row`, or -1 for a row in no group (at or past the last
// end, or any row when the ends decrease): what the reference GEMM and the
// K = 0 scale compute and write, one row at a time.
TCGEMM_HD int group_of_row(const MGroups& groups, int64_t row) {
  if (!groups.ordered()) return -1;
  for (int g = 0; g < groups.count; ++g)
    if (row >= groups.start(g) && row < groups.end(g)) return g;
  return -1;
}

// The table of first slots as the kernels build it (one warp on the device:
// common/device/m_groups.cuh): first_slot[g] for g = 0 .. count, all zero
// (no slot at all) when the ends decrease.
inline void slot_table_host(const MGroups& groups, int* first_slot, int block_m) {
  const bool ordered = groups.ordered();
  first_slot[0] = 0;
  for (int g = 0; g < groups.count; ++g) first_slot[g + 1] = first_slot[g] + (ordered ? groups.slots(g, block_m) : 0);
}

// A tile's rows in an M-grouped call: group g, rows [row0, row_end) of A
// and C (row0 + block_m may pass row_end: those rows are never stored).
struct GroupRows {
  int group;
  int row0;
  int row_end;
};

// The slot `slot` (0 <= slot < first_slot[count]) of the groups whose table
// of first slots is `first_slot` (count + 1 nondecreasing entries, from 0):
// the last group whose first slot is at most `slot` (groups before it that
// take no slot share its first slot, and binary search passes over them).
TCGEMM_HD GroupRows locate(const MGroups& groups, const int* first_slot, int slot, int block_m) {
  int lo = 0, hi = groups.count - 1;  // the answer is in [lo, hi]
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (first_slot[mid] <= slot) lo = mid;
    else hi = mid - 1;
  }
  return GroupRows{lo, groups.start(lo) + (slot - first_slot[lo]) * block_m, groups.end(lo)};
}

// An upper bound on the slots of an M-grouped call with M rows in `count`
// groups, known on the host (the grid's size): each group's blocks of whole
// block_m rows, plus at most one partial block per group.
inline int64_t max_group_slots(int64_t m, int64_t count, int block_m) { return m / block_m + count; }

// The tile an M-grouped call takes, chosen on the host, which knows the rows
// per group only on average (how they fall into slots only the device
// knows). Measured on the H200 over Mixtral's and Qwen3-MoE's layers
// (docs/PERF.md, "An M-grouped GEMM"): up to 32 rows a group, a tile of few
// rows streams the experts' weights fastest; up to `block_m`, the 256-wide
// tile where its tiles make 4 waves or more (fewer, and the slots' luck
// decides its last wave: at 4096 x 14336 it lost 22% there); above, a
// 128-wide one. Both families choose by this rule among the tiles they build.
enum class GroupedTile { few_rows, wide, square };

inline GroupedTile grouped_tile_for(int64_t m, int64_t n, int64_t groups, int num_sms, int block_m) {
  if (groups < 1) groups = 1;
  if (num_sms < 1) num_sms = 1;
  const int64_t avg = (m + groups - 1) / groups;
  const int64_t wide_tiles = groups * ((avg + block_m - 1) / block_m) * ((n + 255) / 256);
  if (avg <= 32) return GroupedTile::few_rows;
  if (avg <= block_m && wide_tiles >= 4 * static_cast<int64_t>(num_sms)) return GroupedTile::wide;
  return GroupedTile::square;
}

}  // namespace tcgemm::detail
