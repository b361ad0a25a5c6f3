#include "sm100/sm100_config.hpp"

namespace tcgemm::sm100 {

static_assert(stages_for(256) >= 4, "a 256-wide tile needs a ring of at least 4 stages");
static_assert(grouped_stages_for(256) >= 3 && grouped_stages_for(128) >= 5,
              "the M-grouped single-CTA tiles keep a ring of at least 3 stages beside the slot table");
static_assert(stages_for(256, 1) >= 3 && stages_for(64, 1) >= 8,
              "the single-CTA tiles stream B: as deep a ring as fits");
static_assert(stages_for(128) >= 6, "a 128-wide tile consumes stages faster: at least 6");
static_assert(tmem_columns(256) <= kTmemColumns && tmem_columns(128) <= kTmemColumns,
              "two accumulators must fit in tensor memory");
static_assert(stages_for(8, 1, 64) >= 16 && stages_for(256, 1, 64) >= 4,
              "the 64-row single-CTA tiles: half of A's rows in a stage, so a deeper ring than the 128-row ones");
static_assert(tmem_lane(15, 64) == 15 && tmem_lane(16, 64) == 32 && tmem_lane(63, 64) == 111 && tmem_lane(77) == 77,
              "a 64-row accumulator: 16 rows in each warp's quarter of the lanes");
static_assert(swap_width(1) == 144 && swap_width(150) == 160 && swap_width(209) == 224 && swap_width(300) == 224,
              "the swapped tiles' width: the narrowest holding M, else the widest");
static_assert(tmem_columns(224) <= kTmemColumns && stages_for(224, 1, kBlockM, true) >= 5,
              "the widest swapped tile: two accumulators in tensor memory, a ring of 5 stages (no panels)");
static_assert(stages_for(16, 1) == stages_for(16, 1, kBlockM, true) && stages_for(96, 1) < stages_for(96, 1, kBlockM, true),
              "no panels for tiles narrower than one (their epilogue stores from registers), nor for swapped ones");
static_assert(tmem_columns(48) == 128 && acc_columns(48) >= 48 && tmem_columns(96) == 256 && acc_columns(96) >= 96,
              "the widths between powers of two: a power-of-two allocation, each accumulator in its half");

namespace {

// Relative throughput of a full wave of each width: a 256 x 128 MMA reads
// 1.5x the operand bytes per FLOP of a 256 x 256 one.
double tile_width_factor(int block_n) { return block_n == 256 ? 1.0 : 0.9; }

// The single-CTA tiles' width among those built `rows` high: the fewest
// waves over the SMs, the narrower among equals (the rule the sm90 family's
// small-M tiles measured best with: a CTA streams B at a rate that grows
// with its tile's width, so a wave of tiles moves about the same bytes
// whatever the width).
int single_width(int64_t m, int64_t n, int num_sms, bool b_k_major, int64_t batch, int rows) {
  int best = 0;
  int64_t best_waves = 0;
  for (const Sm100TileConfig tc : kSm100TileConfigs) {
    if (tc.swap_ab || tc.cta_group != 1 || tc.cta_rows != rows || !builds_for_b(tc.block_n, 1, b_k_major)) continue;
    const int64_t waves = ceil_div(ceil_div(m, rows) * ceil_div(n, tc.block_n) * batch, num_sms);
    if (best == 0 || waves < best_waves || (waves == best_waves && tc.block_n < best)) {
      best = tc.block_n;
      best_waves = waves;
    }
  }
  return best;
}

// The single-CTA configuration `rows` x `block_n` (persistent, one CTA per
// SM at most; swap_ab: the swapped tiles, `m` and `n` then the kernel's).
Config single_config(int64_t m, int64_t n, int num_sms, int rows, int block_n, int64_t batch, bool swap_ab = false) {
  Config c{};
  c.block_m = rows;
  c.block_n = block_n;
  c.block_k = kBlockK;
  c.swap_ab = swap_ab;
  c.stages = stages_for(c.block_n, 1, rows, swap_ab);
  c.cluster_m = 1;
  c.cluster_n = 1;
  c.schedule = Schedule::persistent;
  c.group_m = 8;
  c.num_tiles = static_cast<int>(ceil_div(m, rows) * ceil_div(n, c.block_n) * batch);
  c.grid_clusters = c.num_tiles < num_sms ? c.num_tiles : num_sms;
  return c;
}

}  // namespace

Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override, Schedule schedule,
                     int cta_group, bool b_k_major, int64_t batch, int block_m, bool swap_ab) {
  (void)k;  // every tile does the same K loop: K moves no choice here
  if (num_sms < 1) num_sms = 1;
  // The swapped tiles, forced: the kernel's M is N (128 a tile), its N M.
  if (swap_ab) {
    const int width = is_tile_config(block_n_override, Schedule::persistent, 1, kBlockM, true) ? block_n_override
                                                                                              : swap_width(m);
    if (detail::tile_count_fits_int32(n, m, kBlockM, width, batch))
      return single_config(n, m, num_sms, kBlockM, width, batch, true);
  }
  // A tile height asked for names the CTA group: 256 rows are the pair's.
  if (cta_group == 0 && block_m != 0) cta_group = block_m == kMmaM ? kCtaGroup : 1;
  // Single-CTA tiles: asked for, or M <= 128 where the schedule allows
  // (they are built persistent only) and a forced width has them.
  bool single = cta_group == 1;
  if (cta_group == 0) {
    const bool width_has_single =
        block_n_override == 0 || is_tile_config(block_n_override, Schedule::persistent, 1, 0);
    const bool single_only = is_tile_width(block_n_override) &&
                             !is_tile_config(block_n_override, Schedule::persistent, kCtaGroup);
    const bool small_m = m <= kBlockM && schedule != Schedule::cluster_launch_control && width_has_single;
    // Fewer SMs than a pair (Options::sm_count = 1): a pair's two CTAs
    // would take two.
    const bool one_sm = num_sms < kCtaGroup && schedule != Schedule::cluster_launch_control && width_has_single;
    single = single_only || small_m || one_sm;
  }
  // Their rows: as asked; else 64 for M <= 64, and for a forced width built
  // only 64 rows high (8, 40); else 128.
  const auto built_at = [block_n_override](int rows) {
    return is_tile_config(block_n_override, Schedule::persistent, 1, rows);
  };
  const bool forced_width = built_at(0) && builds_for_b(block_n_override, 1, b_k_major);
  int rows = block_m == 64 ? 64 : kBlockM;
  if (block_m == 0 && (forced_width ? built_at(64) && (m <= 64 || !built_at(kBlockM)) : m <= 64)) rows = 64;
  const int single_block_n = !single ? 0
                             : forced_width && built_at(rows) ? block_n_override
                                 : single_width(m, n, num_sms, b_k_major, batch, rows);
  // (The tile count at the width chosen: a narrow width over a large batch
  // can pass 2^31 tiles where 64-wide tiles would not.)
  if (single && detail::tile_count_fits_int32(m, n, rows, single_block_n, batch))
    return single_config(m, n, num_sms, rows, single_block_n, batch);
  const int slots = num_sms / kCtaGroup > 0 ? num_sms / kCtaGroup : 1;
  const int64_t m_tiles = ceil_div(m, kMmaM) * batch;  // (tile rows of every problem of the batch)
  int block_n = is_tile_config(block_n_override, Schedule::persistent, kCtaGroup) ? block_n_override : 0;
  if (block_n == 0) {
    double best = -1.0;
    for (int w : {256, 128}) {  // ties go to the wider tile
      const double score =
          detail::wave_efficiency(m_tiles * ceil_div(n, w), slots) * tile_width_factor(w) * detail::column_share(n, w);
      if (score > best) {
        best = score;
        block_n = w;
      }
    }
  }
  // Small problems (the matmul_v2 suite's 256^3 and 512^3; M = 256 with N
  // up to 4736 on 148 SMs): where the pair tiles chosen would number at most
  // half the clusters that fit at once, i.e. occupy half the SMs or fewer
  // (two a tile), the single-CTA tiles at the M <= 128 rule's width (the
  // fewest waves, the narrowest among equals): then one wave of tiles no
  // wider than the pair tiles, so each SM has no more of the product to
  // compute before its stores than a CTA of a pair, and narrower tiles
  // spread the operands' bytes over more SMs. This is the sm90
  // family's small-problem rule (64-row tiles where its 128-row ones leave
  // half the SMs idle: 1.01-1.05x on 128^3-512^3, docs/PERF.md) carried over
  // to the pair and single-CTA tiles, not measured on sm100. Not when the
  // call forces a width, a CTA group or Cluster Launch Control (the
  // single-CTA tiles are persistent, so a forced persistent schedule still
  // gets them, as at M <= 128).
  const bool automatic =
      block_n_override == 0 && cta_group == 0 && schedule != Schedule::cluster_launch_control;
  if (automatic && 2 * m_tiles * ceil_div(n, block_n) <= slots) {
    const int width = single_width(m, n, num_sms, b_k_major, batch, kBlockM);
    if (detail::tile_count_fits_int32(m, n, kBlockM, width, batch))
      return single_config(m, n, num_sms, kBlockM, width, batch);
  }
  Config c{};
  c.block_m = kMmaM;
  c.block_n = block_n;
  c.block_k = kBlockK;
  c.stages = stages_for(block_n);
  c.cluster_m = kCtaGroup;
  c.cluster_n = 1;
  c.group_m = 4;  // 4 tile rows = 1024 rows of A per raster group
  c.num_tiles = static_cast<int>(m_tiles * ceil_div(n, block_n));
  // Cluster Launch Control launches one cluster per tile: its grid (2 CTAs a
  // tile) must fit CUDA's grid x-dimension (2^31 - 1). Beyond, persistent.
  const bool clc_grid_fits = static_cast<int64_t>(c.num_tiles) * kCtaGroup <= int64_t{0x7FFFFFFF};
  c.schedule = schedule == Schedule::persistent || !clc_grid_fits ? Schedule::persistent
                                                                   : Schedule::cluster_launch_control;
  c.grid_clusters = c.schedule == Schedule::persistent ? (c.num_tiles < slots ? c.num_tiles : slots) : c.num_tiles;
  return c;
}

Config select_grouped_config(int64_t m, int64_t n, int64_t k, int64_t groups, int num_sms, int block_n_override) {
  (void)k;
  if (num_sms < 1) num_sms = 1;
  if (groups < 1) groups = 1;
  int block_n = 0;
  for (int w : kSm100GroupedWidths)
    if (w == block_n_override) block_n = w;
  // The single-CTA tiles all have 128 rows: a group of few rows takes the
  // 128-wide tile, as one of more than 128 rows does.
  if (block_n == 0)
    block_n = detail::grouped_tile_for(m, n, groups, num_sms, kBlockM) == detail::GroupedTile::wide ? 256 : 128;
  Config c = single_config(0, n, num_sms, kBlockM, block_n, 1);
  c.stages = grouped_stages_for(block_n);
  const int64_t tiles = detail::max_group_slots(m, groups, kBlockM) * ceil_div(n, block_n);
  c.num_tiles = static_cast<int>(tiles);
  c.grid_clusters = static_cast<int>(tiles < num_sms ? tiles : num_sms);
  return c;
}

std::string describe(const KernelConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" + std::to_string(c.block_k) + ", " +
         std::to_string(c.stages) + " stages, " +
         (c.schedule == Schedule::persistent ? "persistent" : "cluster launch control") +
         (c.swap_ab ? ", swapped (C^T = B^T A^T)" : "");
}

}  // namespace tcgemm::sm100
