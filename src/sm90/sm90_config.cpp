#include "sm90/sm90_config.hpp"

#include "sm90/tile_scheduler.hpp"

namespace tcgemm::sm90 {

static_assert(max_stages(256) >= 4, "128x256 tiles need a ring of at least 4 stages to hide TMA latency");
static_assert(max_stages(128) >= 6, "128x128 tiles need a ring of at least 6 stages");

namespace {

// Relative throughput of a full wave of tiles of each width (measured order of
// magnitude on H100/H200 class parts: the 128x128 tile loses ~10% to operand
// bandwidth and per-tile overhead).
double tile_width_factor(int block_n) { return block_n == 256 ? 1.0 : 0.9; }

double wave_efficiency(int64_t tiles, int num_sms) {
  const int64_t waves = (tiles + num_sms - 1) / num_sms;
  return static_cast<double>(tiles) / static_cast<double>(waves * num_sms);
}

}  // namespace

Config select_config(int64_t m, int64_t n, int64_t /*k*/, int num_sms, int block_n_override) {
  if (num_sms < 1) num_sms = 1;
  int block_n = block_n_override;
  if (block_n != 128 && block_n != 256) {
    const int64_t m_blocks = ceil_div(m, kBlockM);
    const double e256 = wave_efficiency(m_blocks * ceil_div(n, 256), num_sms) * tile_width_factor(256);
    const double e128 = wave_efficiency(m_blocks * ceil_div(n, 128), num_sms) * tile_width_factor(128);
    block_n = e128 > e256 ? 128 : 256;
  }
  Config c{};
  c.block_n = block_n;
  c.stages = block_n == 256 ? 4 : 6;
  c.group_m = 8;
  const int64_t tiles = static_cast<int64_t>(ceil_div(m, kBlockM)) * ceil_div(n, block_n);
  c.num_ctas = static_cast<int>(tiles < num_sms ? tiles : num_sms);
  return c;
}

std::string describe(const Config& c) {
  return std::to_string(kBlockM) + "x" + std::to_string(c.block_n) + "x" + std::to_string(kBlockK) + ", " +
         std::to_string(c.stages) + " stages";
}

}  // namespace tcgemm::sm90
