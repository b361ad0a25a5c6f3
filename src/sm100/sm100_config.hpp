// The sm100 kernel's configurations, budgets and the host-side choice
// between them. Pure host arithmetic (also usable in device code where
// marked TCGEMM_HD), unit-tested without a GPU.
//
// One tile = one 256 x BLOCK_N MMA (tcgen05.mma.cta_group::2) over a 2-CTA
// cluster: CTA r of the pair loads rows [128 r, 128 r + 128) of the tile's A
// and columns [r BLOCK_N/2, (r+1) BLOCK_N/2) of its B, and its tensor memory
// receives its 128 rows of the fp32 accumulator. The small-M tiles (chosen
// for M <= 128: decoding) are one 128 x BLOCK_N MMA (cta_group::1) in one
// CTA, which loads all of the tile's B; CTA_GROUP (1 or 2) names the two.
// For M <= 64 the single-CTA tiles are one 64 x BLOCK_N MMA (64 rows a CTA:
// Sm100TileConfig::cta_rows), whose accumulator fills half of tensor
// memory's lanes (tmem_lane).
#pragma once

#include <cstdint>
#include <string>

#include "common/m_groups.hpp"
#include "common/smem_layout.hpp"
#include "common/tile_order.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::sm100 {

using detail::ceil_div;
using detail::GroupedRaster;
using detail::TileCoord;

inline constexpr int kCtaGroup = 2;                  // CTAs per cluster of the pair tiles (cta_group::2)
inline constexpr int kBlockM = 128;                  // rows per CTA (64 for the 64-row single-CTA tiles)
inline constexpr int kMmaM = kBlockM * kCtaGroup;    // 256 rows per tile
inline constexpr int kBlockK = 64;                   // one 128-byte swizzle line of fp16/bf16
inline constexpr int kMmaK = 16;                     // K per tcgen05.mma.kind::f16

// Warp roles (7 warps, as in the GPU MODE matmul_v2 B200 design; see
// docs/DESIGN.md): warps 0-3 epilogue (warp w reads tensor-memory lanes
// 32w..32w+31, the only ones it may access), 4 tile scheduler (Cluster
// Launch Control), 5 TMA producer, 6 MMA issuer.
inline constexpr int kEpilogueWarps = 4;
inline constexpr int kSchedulerWarp = 4;
inline constexpr int kProducerWarp = 5;
inline constexpr int kMmaWarp = 6;
inline constexpr int kThreads = 32 * 7;

// Epilogue: each epilogue warp stores its 32 rows (16 of a 64-row tile:
// epilogue_rows) in panels of 64 columns, double buffered, through TMA.
inline constexpr int kEpiPanelRows = 32;
inline constexpr int kEpiPanelCols = 64;
inline constexpr int kEpiBuffers = 2;
inline constexpr int kAccBuffers = 2;     // accumulators in tensor memory: MMA of tile i+1 || epilogue of tile i
inline constexpr int kClcSlots = 2;       // Cluster Launch Control response ring
inline constexpr int kClcResponseBytes = 16;
// The per-block opt-in maximum on sm_100 (227 KiB, static and dynamic) less
// the kernels' 1 KiB of static shared memory (cuobjdump --dump-resource-usage:
// SHARED:1024, as for the sm90 kernels).
inline constexpr int kSmemLimit = 226 * 1024;
// Shared memory per SM on sm_100 (228 KiB: the CTAs resident on an SM share it).
inline constexpr int kSmemPerSm = 228 * 1024;
inline constexpr int kTmemColumns = 512;       // per SM

// The rows of a tile each epilogue warp stores: a quarter of the CTA's
// (32, or 16 of a 64-row tile), the ones in the tensor-memory lanes it may
// read (tmem_lane).
TCGEMM_HD constexpr int epilogue_rows(int cta_rows = kBlockM) { return cta_rows / kEpilogueWarps; }
// The tensor-memory lane that holds row `row` of a CTA's accumulator (PTX
// ISA, "Data Path Layout Organization"): row r itself for 128 rows (one
// lane a row: layout D, and each CTA's half of a pair's 256, layout A); for
// a 64-row MMA (cta_group::1, layout F) half of the datapath, rows 16w to
// 16w + 15 in lanes 32w to 32w + 15, so that epilogue warp w (lanes 32w to
// 32w + 31) finds its epilogue_rows rows in its first 16 lanes.
TCGEMM_HD constexpr int tmem_lane(int row, int cta_rows = kBlockM) {
  return cta_rows == kBlockM ? row : 32 * (row / epilogue_rows(cta_rows)) + row % epilogue_rows(cta_rows);
}

// Shared memory per stage: this CTA's cta_rows rows of A and its BLOCK_N /
// CTA_GROUP columns of B.
constexpr int stage_bytes(int block_n, int cta_group = kCtaGroup, int cta_rows = kBlockM) {
  return (cta_rows + block_n / cta_group) * kBlockK * 2;
}
// One epilogue panel: an epilogue warp's rows x 64 columns; kEpiBuffers of
// them a warp.
constexpr int panel_bytes(int cta_rows = kBlockM) { return epilogue_rows(cta_rows) * kEpiPanelCols * 2; }
constexpr int epilogue_bytes(int cta_rows = kBlockM) { return kEpilogueWarps * kEpiBuffers * panel_bytes(cta_rows); }
// Whether a tile's epilogue stores C straight from registers: tiles narrower
// than one panel (RegisterEpilogue) and the swapped tiles (SwapEpilogue).
// Their shared memory holds no panels, and the ring takes those bytes (one
// or two stages more: 10 -> 12 at 16 wide, 5 -> 6 at the swapped 144), as
// Hopper's 64- and 8-row tiles do.
constexpr bool stores_from_registers(int block_n, bool swap_ab = false) {
  return swap_ab || block_n < kEpiPanelCols;
}
// The panels' bytes of a tile: epilogue_bytes, or none.
constexpr int panel_area_bytes(int block_n, int cta_rows = kBlockM, bool swap_ab = false) {
  return stores_from_registers(block_n, swap_ab) ? 0 : epilogue_bytes(cta_rows);
}
// smem_full + smem_empty per stage; acc_full + acc_empty per accumulator
// buffer; c_loaded per epilogue warp and buffer; clc_full + clc_empty per
// response slot; then the 16-byte responses and the tensor-memory base.
constexpr int barrier_bytes(int stages) {
  return (2 * stages + 2 * kAccBuffers + kEpilogueWarps * kEpiBuffers + 2 * kClcSlots) * 8 +
         kClcSlots * kClcResponseBytes + 16;
}
constexpr int smem_bytes(int block_n, int stages, int cta_group = kCtaGroup, int cta_rows = kBlockM,
                         bool swap_ab = false) {
  return 1024 + stages * stage_bytes(block_n, cta_group, cta_rows) + panel_area_bytes(block_n, cta_rows, swap_ab) +
         barrier_bytes(stages);
}
// The deepest ring that fits in kSmemLimit (as the matmul_v2 B200 design sizes its ring).
constexpr int stages_for(int block_n, int cta_group = kCtaGroup, int cta_rows = kBlockM, bool swap_ab = false) {
  return detail::deepest_ring(
      [block_n, cta_group, cta_rows, swap_ab](int s) { return smem_bytes(block_n, s, cta_group, cta_rows, swap_ab); },
      kSmemLimit);
}
// Tensor-memory columns: two fp32 accumulators of BLOCK_N columns each,
// allocated as a power of two >= 32 (tcgen05.alloc's rule).
constexpr int tmem_columns(int block_n) {
  int c = 32;
  while (c < kAccBuffers * block_n) c *= 2;
  return c;
}
// Where accumulator buffer b starts: column b * acc_columns(BLOCK_N), the
// allocation split evenly. BLOCK_N itself for the power-of-two widths; 64
// and 128 for the 48- and 96-wide tiles (allocated 128 and 256 columns),
// so that every buffer, and every 32-column tcgen05.ld of the epilogue,
// starts at the same column alignment as those of the power-of-two widths.
constexpr int acc_columns(int block_n) { return tmem_columns(block_n) / kAccBuffers; }

// Whether block_n is a width of kSm100TileConfigs, among the unswapped
// tiles or (swap_ab) the swapped ones.
constexpr bool is_tile_width(int block_n, bool swap_ab = false) {
  for (Sm100TileConfig c : kSm100TileConfigs)
    if (c.block_n == block_n && c.swap_ab == swap_ab) return true;
  return false;
}

// Whether a configuration is built for B's layout: tiles whose CTA loads
// whole 64-column panels of B for both, the others (8, 16, 32, 40, 48 and
// 96 wide) only for B stored K-major (an MN-major B is loaded in 64-wide panels:
// sm100_tile_builds_mn_major_b).
constexpr bool builds_for_b(int block_n, int cta_group, bool b_k_major) {
  return b_k_major || sm100_tile_builds_mn_major_b(block_n, cta_group);
}
// Whether a configuration is built for the call's layout: the swapped tiles
// for A stored K-major (the kernel's B: the tokens), B either way (the
// kernel's A); the others for B's layout as builds_for_b says, A either way.
constexpr bool builds_for_layout(int block_n, int cta_group, bool a_k_major, bool b_k_major, bool swap_ab = false) {
  return swap_ab ? a_k_major : builds_for_b(block_n, cta_group, b_k_major);
}

// Whether (block_n, schedule, cta_group) is one of kSm100TileConfigs, of
// `cta_rows` rows a CTA (0: of any), unswapped or (swap_ab) swapped.
constexpr bool is_tile_config(int block_n, Schedule schedule, int cta_group, int cta_rows = kBlockM,
                              bool swap_ab = false) {
  for (Sm100TileConfig c : kSm100TileConfigs)
    if (c.block_n == block_n && c.schedule == schedule && c.cta_group == cta_group &&
        (cta_rows == 0 || c.cta_rows == cta_rows) && c.swap_ab == swap_ab)
      return true;
  return false;
}

// The swapped tiles' width for M rows of C (Options::swap_ab forced without
// a width): the narrowest that holds M, else the widest (several token tiles).
constexpr int swap_width(int64_t m) {
  int narrowest = 0, widest = 0;
  for (Sm100TileConfig c : kSm100TileConfigs) {
    if (!c.swap_ab) continue;
    if (c.block_n >= m && (narrowest == 0 || c.block_n < narrowest)) narrowest = c.block_n;
    if (c.block_n > widest) widest = c.block_n;
  }
  return narrowest != 0 ? narrowest : widest;
}

// The configuration of one call: what Plan::config shows (block_m = kMmaM
// for the pair tiles, the CTA's rows for the single-CTA ones, 128 or 64;
// block_n the MMA's N;
// block_k = kBlockK; the stages for the tile; cluster_m = the CTA group, 2
// or 1; schedule persistent or cluster_launch_control, never automatic), and
// how the grid covers C.
struct Config : KernelConfig {
  int group_m = 0;        // raster group, in tile rows (256 rows each)
  int num_tiles = 0;      // 256 x block_n tiles covering C (every C of a batch)
  int grid_clusters = 0;  // clusters launched: every tile (CLC), or at most the
                          // resident clusters (persistent; the launcher caps it)
  bool pdl = true;        // launched as a programmatic dependent launch (Options::pdl)
  bool c_evict_first = false;  // C stored with an L2 evict-first policy (common/output_policy.hpp)
  int64_t l2_bytes = 0;  // the device's L2 (DeviceInfo::l2_bytes; 0: not known): operands read once (detail::load_hints)
  int cta_group() const { return cluster_m; }
  int cta_rows() const { return block_m / cluster_m; }  // rows of C per CTA: 128, or 64
};

// Chooses the tile. M <= 128 with the schedule automatic or persistent (or
// cta_group 1 asked for): single-CTA tiles, persistent, of 64 rows for M <=
// 64 (a tcgen05 MMA of M = 64: half the rows of A in a stage, so a deeper
// ring of B, and widths from 8) and of 128 otherwise, the width with the
// fewest waves over the SMs and the narrower among equals (what the sm90
// family's small-M tiles measured best with). Otherwise the pair tiles:
// block_n by last-wave efficiency over the clusters that fit at once
// (num_sms / 2), weighted towards the wider tile (half the operand bytes per
// FLOP); Cluster Launch Control unless `schedule` asks for persistent. Small
// problems, where those pair tiles would occupy half the SMs or fewer: the
// single-CTA tiles at the M <= 128 rule's width instead, unless a width, a
// CTA group or Cluster Launch Control is asked for (sm100_config.cpp says
// why).
// swap_ab (forced only): the swapped single-CTA tiles (Sm100TileConfig::
// swap_ab), 128 of N by block_n of M: the width asked for if it is one of
// theirs, else swap_width(m); the kernel's tiles then run along N by 128 and
// along M by block_n.
// Overrides: block_n 0 (automatic) or one of kSm100TileConfigs' widths;
// schedule automatic, persistent or cluster_launch_control; cta_group 0
// (automatic), 1 or 2; block_m 0 (automatic), 256 (the pair tiles), 128 or
// 64 (the single-CTA tiles of that many rows; a width built only at 64
// rows, 8 or 40, implies 64). batch: the problems of a strided batch
// (GemmArgs::batch), whose tiles one grid covers: the wave counts and the
// tile count (num_tiles, and with it Cluster Launch Control's grid) are
// batch x tiles.
Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, int block_n_override = 0,
                     Schedule schedule = Schedule::automatic, int cta_group = 0, bool b_k_major = true,
                     int64_t batch = 1, int block_m = 0, bool swap_ab = false);

// The ring of the M-grouped tiles (kSm100GroupedWidths, tcgemm.hpp): as deep as fits beside the slot table (static shared memory,
// common/m_groups.hpp), one stage less than stages_for(block_n, 1) where the
// table does not fit in what the ring leaves.
constexpr int grouped_stages_for(int block_n) {
  return detail::deepest_ring([block_n](int s) { return smem_bytes(block_n, s, 1) + detail::kSlotTableBytes; },
                              kSmemLimit);
}

// The configuration of an M-grouped call of M rows in `groups` groups: the
// single-CTA tile of kSm100GroupedWidths the override names (0: automatic),
// else by the rows a group has on average: at most 32, 128 wide (a few rows
// against each group's B: more CTAs streaming the weights); more, 256 wide
// where that makes 4 waves of tiles at the expected slots, else 128
// (detail::grouped_tile_for, the rule both families share; measured on sm90,
// not on sm100).
// The grid covers the most slots the groups can take by N's blocks, at most
// one CTA per SM.
Config select_grouped_config(int64_t m, int64_t n, int64_t k, int64_t groups, int num_sms, int block_n_override = 0);

// "256x256x64, 6 stages, cluster launch control" (or "persistent"): for
// plans and tables.
std::string describe(const KernelConfig& config);

// ---- Cluster Launch Control responses --------------------------------------
// A decoded response: whether a cluster was canceled, and the x index of its
// first CTA (clusterlaunchcontrol.query_cancel.get_first_ctaid). The grid is
// one-dimensional, kCtaGroup CTAs per cluster and one tile per cluster, so
// the canceled cluster's tile index is first_cta_x / kCtaGroup.
struct ClcResponse {
  bool canceled;
  uint32_t first_cta_x;
};

// The tile index a response hands over, or -1 when it says "no more work".
TCGEMM_HD int tile_of(ClcResponse r) {
  return r.canceled ? static_cast<int>(r.first_cta_x / static_cast<uint32_t>(kCtaGroup)) : -1;
}

// Where CTA `rank` of a cluster of `cta_group` CTAs working on tile `t`
// starts: its cta_rows rows of the tile and its share of the tile's columns
// (for loading B).
TCGEMM_HD int cta_row0(TileCoord t, int rank, int cta_group = kCtaGroup, int cta_rows = kBlockM) {
  return (t.m_block * cta_group + rank) * cta_rows;
}
TCGEMM_HD int cta_b_col0(TileCoord t, int rank, int block_n, int cta_group = kCtaGroup) {
  return t.n_block * block_n + rank * (block_n / cta_group);
}

}  // namespace tcgemm::sm100
