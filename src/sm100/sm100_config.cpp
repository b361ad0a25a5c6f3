#include "sm100/sm100_config.hpp"

namespace tcgemm::sm100 {

static_assert(stages_for(256) >= 4, "a 256-wide tile needs a ring of at least 4 stages");
static_assert(stages_for(128) >= 6, "a 128-wide tile consumes stages faster: at least 6");
static_assert(tmem_columns(256) <= kTmemColumns && tmem_columns(128) <= kTmemColumns,
              "two accumulators must fit in tensor memory");

namespace {

// Relative throughput of a full wave of each width: a 256 x 128 MMA reads
// 1.5x the operand bytes per FLOP of a 256 x 256 one.
double tile_width_factor(int block_n) { return block_n == 256 ? 1.0 : 0.9; }

}  // namespace

Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override, Schedule schedule) {
  (void)k;  // every tile does the same K loop: K moves no choice here
  const int slots = num_sms / kCtaGroup > 0 ? num_sms / kCtaGroup : 1;
  const int64_t m_tiles = ceil_div(m, kMmaM);
  int block_n = block_n_override;
  if (!is_tile_width(block_n)) {
    double best = -1.0;
    for (int w : {256, 128}) {  // ties go to the wider tile
      const double score = detail::wave_efficiency(m_tiles * ceil_div(n, w), slots) * tile_width_factor(w);
      if (score > best) {
        best = score;
        block_n = w;
      }
    }
  }
  Config c{};
  c.block_m = kMmaM;
  c.block_n = block_n;
  c.block_k = kBlockK;
  c.stages = stages_for(block_n);
  c.cluster_m = kCtaGroup;
  c.schedule = schedule == Schedule::persistent ? Schedule::persistent : Schedule::cluster_launch_control;
  c.group_m = 4;  // 4 tile rows = 1024 rows of A per raster group
  c.num_tiles = static_cast<int>(m_tiles * ceil_div(n, block_n));
  c.grid_clusters = c.schedule == Schedule::persistent ? (c.num_tiles < slots ? c.num_tiles : slots) : c.num_tiles;
  return c;
}

std::string describe(const KernelConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" + std::to_string(c.block_k) + ", " +
         std::to_string(c.stages) + " stages, " +
         (c.schedule == Schedule::persistent ? "persistent" : "cluster launch control");
}

}  // namespace tcgemm::sm100
