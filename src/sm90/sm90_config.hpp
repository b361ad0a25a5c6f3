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

// One CTA = 1 producer warpgroup + 1 or 2 consumer warpgroups: BLOCK_M =
// 128 (two consumers of 64 rows each, the default), 256 (the tall tile: two
// consumers of 128 rows each, two m64 accumulators apiece) or 64 (one: the
// small-M configurations). Each consumer owns its rows and all BLOCK_N
// columns.
// BLOCK_M = 8 (the decode tile, M <= 8): one consumer whose m64 wgmmas read
// the tile's 8 rows of A eight times over (sm90/mma.cuh), so A takes 1 KiB
// of a stage per k-block and a stage holds kDecodeStageKBlocks k-blocks.
inline constexpr int kBlockM = 128;             // the default tile height
// The tall tile's height: each of B's columns is read once per 256 rows of
// C, not once per 128 (one block-row for 129-256 rows, two for 257-512:
// docs/PERF.md, "The tall tile"). Up to 128 wide (two m64 accumulators of
// BLOCK_N / 2 registers each per consumer thread); swapped, 136 to 160
// (256 rows of N by that many tokens: TileConfig::swap_ab).
inline constexpr int kTallBlockM = 256;
inline constexpr int kSmallBlockM = 64;         // the small-M tile height
inline constexpr int kDecodeBlockM = 8;         // the decode tile height
inline constexpr int kBlockK = 64;              // one 128-byte swizzle row of fp16/bf16
// K-blocks per ring stage of the decode tile: one full barrier and one wgmma
// group per 4 k-blocks. A TMA probe streaming W's rows (docs/PERF.md, "a TMA
// stream probe") ran 1.3-1.5x faster with 2-4 adjacent k-blocks per stage
// than with one, whatever the ring's depth; in the GEMM the decode tile
// measured 0-3% faster than the 64-row tile at 32-48 wide and 0-1.7% slower
// at 64 (docs/PERF.md, "An 8-row decode tile"), so it is chosen up to 48.
inline constexpr int kDecodeStageKBlocks = 4;
inline constexpr int kNumConsumers = 2;         // with BLOCK_M = 128 or 256
inline constexpr int kThreads = 128 * (1 + kNumConsumers);
inline constexpr int kEpiPanel = 64;            // C is stored in 64 x 64 panels (BLOCK_M = 128, 256)
inline constexpr int kEpiBuffers = 2;           // panel buffers per consumer
inline constexpr int kSmemLimit = 227 * 1024;   // per-block opt-in maximum on sm_90

// Whether tiles of BLOCK_M rows have one consumer, which stores C straight
// from its registers (64 and 8 rows), rather than two that store through
// shared-memory panels and TMA (128 and 256 rows).
constexpr bool stores_from_registers(int block_m) { return block_m < kBlockM; }
// Consumer warpgroups and threads of a CTA with BLOCK_M rows (two for 128
// and 256 rows, one for 64 or 8).
constexpr int consumers_for(int block_m) { return stores_from_registers(block_m) ? 1 : kNumConsumers; }
// The m64 accumulators a consumer holds: two in the tall tile (its 128 rows)
// and with ping-pong (a whole 128-row tile), else one.
constexpr int mma_rows_for(int block_m, bool pingpong) { return pingpong || block_m == kTallBlockM ? 2 : 1; }
constexpr int threads_for(int block_m) { return 128 * (1 + consumers_for(block_m)); }

// K-blocks (kBlockK each) in one stage of the ring: kDecodeStageKBlocks for
// the decode tile, one for the others; and the K one stage covers
// (KernelConfig::block_k).
constexpr int stage_k_blocks(int block_m) { return block_m == kDecodeBlockM ? kDecodeStageKBlocks : 1; }
constexpr int stage_block_k(int block_m) { return kBlockK * stage_k_blocks(block_m); }

// Shared memory the kernel uses for a given tile and stage count: the
// operand ring, the epilogue panels (BLOCK_M = 128 and 256 only: the 64- and
// 8-row tiles store from registers), barriers, and 1 KiB to align the base.
// b_cols: the columns B's k-block takes in a stage (0: block_n; more where
// an MN-major B is held in whole panels: b_slot_cols).
constexpr int stage_bytes(int block_n, int block_m = kBlockM, int b_cols = 0) {
  return (block_m + (b_cols != 0 ? b_cols : block_n)) * kBlockK * 2 * stage_k_blocks(block_m);
}
// Per consumer: kEpiBuffers 64x64 panels, and one panel's bias in fp32 (the
// fused epilogue stages it there: sm90/epilogue.cuh).
inline constexpr int kBiasStageBytes = kEpiPanel * 4;
// Panel buffers per consumer: kEpiBuffers, or one for the swapped tall tile
// (256 rows, wider than 128), whose ring needs the bytes for its fourth
// stage: with three stages (and two buffers) it ran 5-8% slower than the
// 128-row swapped tile per unit of work, with four 5% faster (docs/PERF.md,
// "Swap-AB, tall"); and one for the swapped 128 x 200, for a fifth stage
// (0.2-5.5% faster at 193-200 rows; the 128 x 192 tile, which gets one the
// same way, 0-0.7%: not taken); and one for the 128-row tiles 136 and 144
// wide (swapped, and 144 unswapped), for a sixth stage: 2-4% faster at one
// tile a CTA (520 and 560 x 4096 x 4096 swapped, 600 x 3584 x 4096 and 512
// x 4608 x 3584), within 2% either way at two to five (docs/PERF.md,
// "Mid-size products"); 128 x 96 with a seventh stage the same way ran up
// to 5% slower at several tiles a CTA: not taken. Each panel then waits for
// the store of the one before.
constexpr int epi_buffers(int block_m, int block_n) {
  const bool one = block_m == kTallBlockM ? block_n > 128 : block_n == 136 || block_n == 144 || block_n == 200;
  return block_m >= kBlockM && one ? 1 : kEpiBuffers;
}
constexpr int epilogue_bytes(int block_m = kBlockM, int block_n = 0) {
  return stores_from_registers(block_m)
             ? 0
             : kNumConsumers * (epi_buffers(block_m, block_n) * kEpiPanel * kEpiPanel * 2 + kBiasStageBytes);
}
// Whether a kernel can store C two 64-column panels at a time, 64 x 128
// boxes (paired stores: sm90/epilogue.cuh, Epilogue::store_pairs): tiles
// stored through panels whose width is whole pairs (128, 256), two panel
// buffers a consumer (a pair fills both), unswapped, not M-grouped. Which
// calls take them: pairs_c (below select_config).
constexpr bool stores_panel_pairs(int block_m, int block_n, bool swap_ab, bool grouped) {
  return !stores_from_registers(block_m) && block_n % (2 * kEpiPanel) == 0 && epi_buffers(block_m, block_n) == 2 &&
         !swap_ab && !grouped;
}

// Whether a kernel can take its tiles from a counter (Schedule::counted,
// sm90/tile_counter.cuh): the 128-row tiles of one CTA (cooperative or
// ping-pong), unswapped, not M-grouped. The others always walk the static
// persistent schedule.
constexpr bool counts_tiles(int block_m, int cluster_ctas, bool swap_ab, bool grouped) {
  return block_m == kBlockM && cluster_ctas == 1 && !swap_ab && !grouped;
}

// smem_full + smem_empty per stage, c_loaded per consumer buffer, and one
// math_turn per consumer (the ping-pong hand-over); then, for counted tiles
// (sm90/tile_counter.cuh), a tile index per stage and the done flag.
constexpr int barrier_bytes(int stages) {
  return (2 * stages + kNumConsumers * kEpiBuffers + kNumConsumers) * 8 + ((stages + 1) * 4 + 7) / 8 * 8;
}
constexpr int smem_bytes(int block_n, int stages, int block_m = kBlockM, int b_cols = 0) {
  return 1024 + stages * stage_bytes(block_n, block_m, b_cols) + epilogue_bytes(block_m, block_n) +
         barrier_bytes(stages);
}
// The deepest ring that fits.
constexpr int max_stages(int block_n, int block_m = kBlockM) {
  return detail::deepest_ring([block_n, block_m](int s) { return smem_bytes(block_n, s, block_m); }, kSmemLimit);
}

// Ring depth per tile: as deep as 227 KiB allows, at most 8 for 128- and
// 256-row tiles (they are tensor-bound where they are chosen; a deeper ring
// hides no more), at most 32 for 64- and 8-row ones (chosen where B's bytes
// are the whole cost: every stage in flight is more of B on its way).
constexpr int stages_for(int block_n, int block_m = kBlockM) {
  const int cap = stores_from_registers(block_m) ? 32 : 8;
  return max_stages(block_n, block_m) < cap ? max_stages(block_n, block_m) : cap;
}

// An MN-major B (op_b = N) that would be held in 16-column panels (32-byte
// swizzle: 112 wide, in the 128- and 256-row tiles): its k-block is held as
// whole 64-column panels (128-byte swizzle) instead, the last one loaded
// whole, its columns past the tile (the next tile's, or zeros past N) never
// read; the wgmma of BLOCK_N columns reads the first BLOCK_N of them. In
// 16-column panels TMA writes 32-byte lines, seven boxes a k-block: the
// 128 x 112 tile took 1.4-1.6x as long as in whole panels (512 x 3584 x
// 4096 and 1024 x 7168 x 2048 NN, H100), the 256 x 112 up to 1.3x. Not for
// the 32-column panels of 96 and 160: at 96 the whole panels' third more
// of B's bytes cost more than the longer lines gained (the 128 x 96 tile
// 3-8% slower at 1024-2048 x 1536 x 1024 NN and TN: docs/PERF.md, part
// 27). Only where the wider slot leaves the ring as deep as stages_for made
// it (not 144 wide, nor the 64-row tiles' 48).
constexpr int whole_panels(int cols) { return (cols + 63) / 64 * 64; }
constexpr bool pads_mn_b(int block_n, int block_m) {
  return detail::mn_panel_cols(block_n) == 16 && !stores_from_registers(block_m) &&
         smem_bytes(block_n, stages_for(block_n, block_m), block_m, whole_panels(block_n)) <= kSmemLimit;
}
// The columns B's k-block takes in a stage: block_n, or whole 64-column
// panels for an MN-major B where pads_mn_b.
constexpr int b_slot_cols(int block_n, int block_m, bool b_mn_major) {
  return b_mn_major && pads_mn_b(block_n, block_m) ? whole_panels(block_n) : block_n;
}

// The shallow ring: the narrow 64-row tiles (8, 16, 32, 64 wide) are also
// built with 4 stages, for small problems (the small-problem rule of
// select_config) with K of at most 4 k-blocks and the plain epilogue, where
// a deep ring is never filled: 64 x 16 asks for 41 KB of shared memory, not
// 226 KB, and initializes 8 barriers, not 44. Measured on the H200
// (docs/PERF.md): 4-7% fewer cycles per kernel under Nsight Compute at 128^3
// and 256^3, 0.1-0.3 us less in `bench`.
inline constexpr int kShallowStages = 4;
constexpr bool has_shallow_ring(int block_n, int block_m) {
  return block_m == kSmallBlockM && (block_n == 8 || block_n == 16 || block_n == 32 || block_n == 64);
}

// Whether block_n is one of the widths the kernel is instantiated for.
constexpr bool is_tile_width(int block_n) {
  for (int w : kTileWidths)
    if (w == block_n) return true;
  return false;
}

// Whether (block_n, cluster_m, pingpong, block_m, cluster_n, swap_ab) is one of kTileConfigs.
constexpr bool is_tile_config(int block_n, int cluster_m, bool pingpong = false, int block_m = kBlockM,
                              int cluster_n = 1, bool swap_ab = false) {
  for (TileConfig c : kTileConfigs)
    if (c.block_n == block_n && c.cluster_m == cluster_m && c.pingpong == pingpong && c.block_m == block_m &&
        c.cluster_n == cluster_n && c.swap_ab == swap_ab)
      return true;
  return false;
}
// Whether block_n is the width of a swapped configuration (TileConfig::swap_ab).
constexpr bool is_swap_width(int block_n) { return is_tile_config(block_n, 1, false, kBlockM, 1, true); }

// Whether a configuration is built for B's layout: the widths that are not
// whole 16-column panels only for B stored K-major.
constexpr bool builds_for_b(int block_n, bool b_k_major) {
  return b_k_major || tile_width_builds_mn_major_b(block_n);
}
static_assert(detail::mn_panel_cols(48) == 16 && detail::mn_panel_cols(96) == 32 && detail::mn_panel_cols(8) == 0,
              "builds_for_b and the MN-major panels agree");

// Whether a configuration of tile height block_m and width block_n is built
// for the call's layout: builds_for_b, and the decode tile (BLOCK_M = 8)
// only for A and B both stored K-major (op_a = N, op_b = T: x @ W^T): its 8
// rows of A are one 8-row group of a K-major k-block.
// The swapped configurations (swap_ab) for A stored K-major (op_a = N): the
// tokens are their wgmma B operand, block_n of them a tile, loaded K-major;
// B, their wgmma A operand, block_m (128 or 256) of its columns a tile, is
// loaded either way (whole 64-column panels where it is MN-major).
constexpr bool builds_for_layout(int block_m, int block_n, bool a_k_major, bool b_k_major, bool swap_ab = false) {
  if (swap_ab) return a_k_major;
  return builds_for_b(block_n, b_k_major) && (block_m != kDecodeBlockM || (a_k_major && b_k_major));
}

// The configuration of one call: what Plan::config shows (block_m 128, 256,
// 64 or 8, block_n one of kTileWidths, block_k = stage_block_k(block_m), the
// stages for the tile, cluster_m and cluster_n 1 or 2 (not both 2),
// pingpong, schedule persistent or counted), and how the persistent grid covers C.
struct Config : KernelConfig {
  int group_m = 0;   // raster group, in cluster block-rows (cluster_m of them each)
  int num_ctas = 0;  // persistent grid size: an upper bound; the launcher caps it
                     // at the number of clusters that can be resident at once
  bool pdl = true;   // launched as a programmatic dependent launch (Options::pdl)
  bool c_evict_first = false;  // C stored with an L2 evict-first policy (common/output_policy.hpp)
  int64_t l2_bytes = 0;  // the device's L2 (DeviceInfo::l2_bytes; 0: not known): operands read once (detail::load_hints)
  int device = 0;  // the current device (DeviceInfo::id): whose counter pool counted tiles draw on
};

// The automatic schedule counts tiles (Schedule::counted) only on a GPU
// whose L2 is under this (select_config). Counting pays for reading the
// operands once where the static walk reads them again: on an H100 (50 MiB
// of L2) the persistent walk of 128 x 2048^2 x 128 read its 134 MB of
// operands 1.63 times and counted tiles read them once. On an H200 (60 MiB)
// the persistent walk already reads them once (Nsight Compute: 134.35 MB,
// the same as cuBLAS's and as counted tiles'), and counting only adds the
// hand-off: 0.6-3.5% slower on the store-bound batches (docs/PERF.md, part 23).
// Two GPUs measured: the L2 size is the difference between them that bears
// on re-reads, and the bound sits between the two; not derived.
inline constexpr int64_t kCountedMaxL2Bytes = int64_t{56} << 20;

// What a call asks of the choice: the Options' overrides (0: automatic) and
// B's layout (whether B is stored K-major: op_b = T).
struct ConfigRequest {
  int block_n = 0;
  int cluster_m = 0;
  bool pingpong = false;
  int block_m = 0;
  bool b_k_major = true;
  // The problems of a strided batch (GemmArgs::batch): one grid walks all
  // their tiles, so every wave count below counts batch x tiles.
  int64_t batch = 1;
  // Whether A is stored K-major (op_a = N): the decode tile and the swapped kernel need it.
  bool a_k_major = true;
  // Whether the call has a fused epilogue (bias or activation): the shallow
  // ring is built for the plain epilogue only.
  bool fused = false;
  // Options::cluster_n (0: automatic).
  int cluster_n = 0;
  // Options::swap_ab (false: automatic).
  bool swap_ab = false;
  // Options::schedule: automatic, persistent or counted (select_config).
  Schedule schedule = Schedule::automatic;
  // The device's L2 in bytes (DeviceInfo::l2_bytes; 0: not known): whether
  // the automatic schedule counts tiles (kCountedMaxL2Bytes).
  int64_t l2_bytes = 0;
};

// Picks the configuration (unless overridden by one of kTileConfigs).
// M <= 64 (decoding: a few rows of A against a large B, whose bytes are the
// whole cost): 64-row tiles, the width that spreads N over the SMs most
// evenly with enough of B in flight per SM (the ring's depth times the
// width); for M <= 8 with A and B K-major, the decode tile of that width
// where it is built (8 rows, 4 k-blocks a stage), and for 8 < M <= 64 where
// the 64-row tiles would occupy at most half the SMs, the decode tile at the
// same rule's width among its own widths. Otherwise 128-row tiles by the
// expected efficiency of the last wave: tiles / (waves * num_sms), weighted
// by how well each tile keeps the tensor cores fed (narrower tiles move more
// operand bytes per FLOP: 128x64 moves 2.5x what 128x256 does) and, for the
// ping-pong 128x128, by how much epilogue it hides (more at short K). For
// 129-176, 193-224 and 257-320 rows of C against a wide B (A K-major, B
// either way, no batch), and up to 640 where it computes 10% fewer rows than the
// 128-row tiles, the swapped kernel (swap_ab) where its grid fills the SMs,
// 128 or 256 rows of B (the tall swapped tiles) a tile. Tiles are walked in
// raster groups of 8 block-rows, or of one (row-major) for a strided batch
// of store-bound problems (K <= 256, each B at most 8 MiB; raster_group),
// whose tiles are then counted (Schedule::counted) where the tile can be
// (counts_tiles) and the L2 is small enough that the static walk would read
// the operands again (request.l2_bytes), unless the request names the schedule;
// such a batch whose 128-row tiles, 128 wide or more, make at most one tile
// an SM takes 128 x 64 (two tiles a CTA: the next loads while the last is
// stored), with the plain epilogue.
Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& request);
// The same with the Options' overrides as arguments (B K-major).
inline Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override = 0,
                            int cluster_m_override = 0, bool pingpong_override = false, int block_m_override = 0,
                            int cluster_n_override = 0, bool swap_ab_override = false) {
  ConfigRequest r{block_n_override, cluster_m_override, pingpong_override, block_m_override, true};
  r.cluster_n = cluster_n_override;
  r.swap_ab = swap_ab_override;
  return select_config(m, n, k, num_sms, r);
}

// The configuration of an M-grouped call (GemmArgs::groups) of M rows in
// `groups` groups: the one of kGroupedTileConfigs that the overrides name (0
// / false: automatic; check_grouped_options has refused any that name none),
// else by the rows a group has on average: at most 32, the 64-row tile (a
// few rows against each group's B); at most 128, 128 x 256 where that makes
// 4 waves of tiles or more; else ping-pong 128 x 128 (detail::grouped_tile_for,
// the rule both families share). The grid
// covers the most slots the groups can take (detail::max_group_slots) by N's
// blocks, at most one CTA per SM.
Config select_grouped_config(int64_t m, int64_t n, int64_t k, int64_t groups, int num_sms, int block_n_override = 0,
                             int block_m_override = 0, bool pingpong_override = false);
// The kGroupedTileConfigs entry the overrides name (the first that matches
// every non-zero one), or null.
const TileConfig* grouped_tile_config(int block_n, int block_m, bool pingpong);

// "128x256x64, 4 stages[, cluster 2x1 (B multicast)][, cluster 1x2 (A
// multicast)][, ping-pong][, swapped (C^T = B^T A^T)][, counted tiles]": for
// plans and tables.
std::string describe(const KernelConfig& config);

// Whether `call` on a block_m x block_n kernel (ping-pong or not) stores C
// in pairs of panels (stores_panel_pairs): the ping-pong tiles with the
// plain epilogue, N a multiple of 64 (the pair map's blocks then end at N),
// and K at most kPairsMaxK. C's map is then the pair map and the kernel's
// epi.paired is set (the launcher asks once a call and passes the answer on
// with the maps). The bits are the same either way: only how C leaves changes.
//
// Only at short K: there the call is C's write stream, and 64 x 128 boxes
// (rows of 256 bytes) wrote C faster than two 64 x 64 boxes: batches of
// 512-2048^2 x 64-128 1-7% faster on an H100, 8192^2 x 256 2-3%. At K = 512
// the ping-pong tile ran up to 3% slower with them, and at K = 1024-4096
// 13-15%; the cooperative tile of the 128^3 batches (one tile a problem)
// 1-3.5% slower at K = 128 (docs/PERF.md, "Paired stores").
inline constexpr int64_t kPairsMaxK = 256;
bool pairs_c(const GemmArgs& call, int block_m, int block_n, bool swap_ab, bool pingpong);

}  // namespace tcgemm::sm90
