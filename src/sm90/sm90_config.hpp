// The sm90 kernel's configurations and the host-side choice between them.
// Pure host code: "which config?" never leaks into kernel code.
#pragma once

#include <cstdint>
#include <string>

#include "common/smem_layout.hpp"
#include "common/tile_order.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::sm90 {

using detail::ceil_div;
using detail::GroupedRaster;
using detail::TileCoord;

// One CTA = 1 producer warpgroup + 2 consumer warpgroups. Each consumer owns
// 64 rows of the BLOCK_M = 128 tile and all BLOCK_N columns.
inline constexpr int kBlockM = 128;
inline constexpr int kBlockK = 64;              // one 128-byte swizzle row of fp16/bf16
inline constexpr int kNumConsumers = 2;
inline constexpr int kThreads = 128 * (1 + kNumConsumers);
inline constexpr int kEpiPanel = 64;            // C is stored in 64 x 64 panels
inline constexpr int kEpiBuffers = 2;           // panel buffers per consumer
inline constexpr int kSmemLimit = 227 * 1024;   // per-block opt-in maximum on sm_90

// Shared memory the kernel uses for a given BLOCK_N and stage count: the
// operand ring, the epilogue panels, barriers, and 1 KiB to align the base.
constexpr int stage_bytes(int block_n) { return (kBlockM + block_n) * kBlockK * 2; }
constexpr int epilogue_bytes() { return kNumConsumers * kEpiBuffers * kEpiPanel * kEpiPanel * 2; }
// smem_full + smem_empty per stage, c_loaded per consumer buffer, and one
// math_turn per consumer (the ping-pong hand-over).
constexpr int barrier_bytes(int stages) { return (2 * stages + kNumConsumers * kEpiBuffers + kNumConsumers) * 8; }
constexpr int smem_bytes(int block_n, int stages) {
  return 1024 + stages * stage_bytes(block_n) + epilogue_bytes() + barrier_bytes(stages);
}
// The deepest ring that fits.
constexpr int max_stages(int block_n) {
  return detail::deepest_ring([block_n](int s) { return smem_bytes(block_n, s); }, kSmemLimit);
}

// Ring depth per tile width: as deep as 227 KiB allows, at most 8 (a deeper
// ring hides no more latency and only delays the first tile's start).
constexpr int stages_for(int block_n) { return max_stages(block_n) < 8 ? max_stages(block_n) : 8; }

// Whether block_n is one of the widths the kernel is instantiated for.
constexpr bool is_tile_width(int block_n) {
  for (int w : kTileWidths)
    if (w == block_n) return true;
  return false;
}

// Whether (block_n, cluster_m, pingpong) is one of kTileConfigs.
constexpr bool is_tile_config(int block_n, int cluster_m, bool pingpong = false) {
  for (TileConfig c : kTileConfigs)
    if (c.block_n == block_n && c.cluster_m == cluster_m && c.pingpong == pingpong) return true;
  return false;
}

// The configuration of one call: what Plan::config shows (block_m = kBlockM,
// block_n one of kTileWidths, block_k = kBlockK, the stages for block_n,
// cluster_m 1 or 2, pingpong, schedule always persistent), and how the
// persistent grid covers C.
struct Config : KernelConfig {
  int group_m = 0;   // raster group, in cluster block-rows
  int num_ctas = 0;  // persistent grid size: an upper bound; the launcher caps it
                     // at the number of clusters that can be resident at once
};

// Picks the configuration (unless overridden by one of kTileConfigs) by the
// expected efficiency of the last wave: tiles / (waves * num_sms), weighted by
// how well each tile keeps the tensor cores fed (narrower tiles move more
// operand bytes per FLOP: 128x64 moves 2.5x what 128x256 does) and, for the
// ping-pong 128x128, by how much epilogue it hides (more at short K).
Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override = 0,
                     int cluster_m_override = 0, bool pingpong_override = false);

// "128x256x64, 4 stages[, cluster 2x1 (B multicast)][, ping-pong]": for
// plans and tables.
std::string describe(const KernelConfig& config);

}  // namespace tcgemm::sm90
