#include <algorithm>
#include <iterator>
#include <vector>

#include "common/host/tensor_map.hpp"
#include "common/m_groups.hpp"
#include "sm100/sm100_gemm.hpp"

namespace tcgemm::sm100 {

std::string can_implement(const GemmArgs& args) {
  using namespace tcgemm::detail;
  if (!tile_count_fits_int32(args.m, args.n, kMmaM, 128, args.batch))
    return args.batch > 1 ? "batch x M x N has more output tiles than 32-bit tile indices reach"
                          : "M x N has more output tiles than 32-bit tile indices reach";
  // (An M-grouped call: the most slots its groups can take, by N's narrowest grouped blocks.)
  if (args.grouped() && !tile_count_fits_int32(max_group_slots(args.m, args.groups, kBlockM), args.n, 1, 128))
    return "the groups' M x N has more output tiles than 32-bit tile indices reach";
  return gemm_maps_unsupported_reason(args, tma_operand_a(args, kBlockM, kBlockK),
                                      tma_operand_b(args, 256, kBlockK, kCtaGroup),
                                      tma_output_c(args, kEpiPanelCols, kEpiPanelRows));
}

namespace {

// "0, 16, ... or 256": automatic, then the widths of the unswapped (or the
// swapped) tiles of kSm100TileConfigs, ascending.
std::string width_list(bool swap_ab) {
  std::vector<int> widths{0};
  for (Sm100TileConfig c : kSm100TileConfigs)
    if (c.swap_ab == swap_ab && std::find(widths.begin(), widths.end(), c.block_n) == widths.end())
      widths.push_back(c.block_n);
  std::sort(widths.begin(), widths.end());
  std::string list;
  for (size_t i = 0; i < widths.size(); ++i)
    list += (i == 0 ? "" : i + 1 == widths.size() ? " or " : ", ") + std::to_string(widths[i]);
  return list;
}

// check_options for the swapped tiles (Options::swap_ab).
std::string check_swapped_options(const Options& o) {
  if (o.block_n != 0 && !is_tile_width(o.block_n, true))
    return "Options::block_n must be " + width_list(true) + " with Options::swap_ab on sm_100 (the swapped tiles' " +
           "widths: the rows of C a tile covers), not " + std::to_string(o.block_n);
  if (o.pingpong || o.cluster_n != 0)
    return "Options::pingpong and cluster_n select sm90 configurations; leave them false and 0 with "
           "Options::swap_ab on sm_100";
  if ((o.block_m != 0 && o.block_m != kBlockM) || (o.cluster_m != 0 && o.cluster_m != 1))
    return "the swapped sm_100 tiles are single-CTA, 128 of N a tile (Options::block_m 0 or 128, cluster_m 0 or 1), "
           "not block_m = " + std::to_string(o.block_m) + ", cluster_m = " + std::to_string(o.cluster_m);
  if (o.schedule == Schedule::cluster_launch_control)
    return "the swapped sm_100 tiles are built with the persistent schedule only, not cluster_launch_control";
  return {};
}

}  // namespace

std::string check_options(const Options& o) {
  if (o.schedule == Schedule::counted)
    return "Options::schedule = counted is sm_90's; on sm_100 tiles are handed out persistent or by Cluster Launch "
           "Control (Options::schedule persistent or cluster_launch_control)";
  if (o.swap_ab) return check_swapped_options(o);
  if (o.block_n != 0 && !is_tile_width(o.block_n))
    return "Options::block_n must be " + width_list(false) + " on sm_100, not " + std::to_string(o.block_n) +
           (is_tile_width(o.block_n, true) ? " (a width of the swapped tiles: with Options::swap_ab)" : "");
  if (o.pingpong || o.cluster_n != 0)
    return "Options::pingpong and cluster_n select sm90 configurations; on sm_100 a tile is 256 rows over a 2-CTA "
           "cluster or 128 or 64 rows in one CTA (Options::cluster_m 2 or 1, Options::block_m; leave pingpong false "
           "and cluster_n 0)";
  if (o.block_m != 0 && o.block_m != kMmaM && o.block_m != kBlockM && o.block_m != 64)
    return "Options::block_m must be 0 (automatic), 256 (pair tiles), 128 or 64 (single-CTA tiles) on sm_100, not " +
           std::to_string(o.block_m);
  if (o.cluster_m != 0 && o.cluster_m != 1 && o.cluster_m != kCtaGroup)
    return "Options::cluster_m must be 0 (automatic), 1 (single-CTA tiles) or 2 (pair tiles) on sm_100, not " +
           std::to_string(o.cluster_m);
  if (o.block_m != 0 && o.cluster_m != 0 && (o.block_m == kMmaM) != (o.cluster_m == kCtaGroup))
    return "Options::block_m = " + std::to_string(o.block_m) + " and cluster_m = " + std::to_string(o.cluster_m) +
           " disagree on sm_100: pair tiles (cluster_m 2) are 256 rows, single-CTA tiles (cluster_m 1) 128 or 64";
  // A forced combination must be built: single-CTA tiles are persistent only.
  const bool single = o.cluster_m == 1 || (o.block_m != 0 && o.block_m != kMmaM) ||
                      (o.cluster_m == 0 && o.block_m == 0 && o.block_n != 0 &&
                       !is_tile_config(o.block_n, Schedule::persistent, kCtaGroup));
  if (single && o.schedule == Schedule::cluster_launch_control)
    return "the single-CTA sm_100 tiles (Options::cluster_m = 1, block_m 128 or 64, or a block_n other than 128 and "
           "256) are built with the persistent schedule only, not cluster_launch_control";
  // (Single-CTA tiles of any height, unless one is asked for.)
  const int rows = single ? (o.block_m != 0 ? o.block_m : 0) : kBlockM;
  if (o.block_n != 0 && !is_tile_config(o.block_n, Schedule::persistent, single ? 1 : kCtaGroup, rows))
    return "Options::block_n = " + std::to_string(o.block_n) + " is not built for " +
           (single ? rows != 0 ? std::to_string(rows) + "-row single-CTA" : std::string("single-CTA")
                   : std::string("pair")) +
           " tiles on sm_100 (kSm100TileConfigs)";
  return {};
}

std::string check_grouped_options(const GemmArgs& args, const Options& o) {
  (void)args;
  if (o.swap_ab) return "an M-grouped call runs unswapped (Options::swap_ab false)";
  if (o.cluster_m == kCtaGroup || o.schedule == Schedule::cluster_launch_control ||
      (o.block_m != 0 && o.block_m != kBlockM))
    return "an M-grouped call runs on the single-CTA sm_100 tiles of 128 rows, persistent (Options::cluster_m 0 or "
           "1, block_m 0 or 128, schedule automatic or persistent)";
  if (o.block_n != 0 && std::find(std::begin(kSm100GroupedWidths), std::end(kSm100GroupedWidths), o.block_n) ==
                            std::end(kSm100GroupedWidths))
    return "Options::block_n = " + std::to_string(o.block_n) +
           " names no sm_100 tile built for M-grouped calls (kSm100GroupedWidths: 128, 256)";
  return {};
}

std::string check_layout(const GemmArgs& args, const Options& o) {
  if (o.swap_ab)
    return builds_for_layout(o.block_n, 1, args.op_a == Op::N, args.op_b == Op::T, true)
               ? std::string()
               : "Options::swap_ab (the swapped tiles) is built for A stored K-major only (op_a = N: the tokens, B "
                 "either way); this call has op_a = " + std::string(to_string(args.op_a));
  if (o.block_n != 0 && !builds_for_b(o.block_n, 1, args.op_b == Op::T) &&
      !is_tile_config(o.block_n, Schedule::persistent, kCtaGroup))
    return "Options::block_n=" + std::to_string(o.block_n) +
           " (a single-CTA sm_100 tile) is built for B stored K-major only (op_b = T, the nn.Linear layout); this "
           "call has op_b = N";
  return {};
}

std::string kernel_name(const GemmArgs& args, const KernelConfig& config) {
  return std::string("sm100_gemm<") + to_string(args.dtype) + "," + to_string(args.op_a) + to_string(args.op_b) +
         "," + describe(config) + (args.grouped() ? ", M-grouped" : "") + ">";
}

std::string run(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return args.dtype == DType::f16 ? run_f16(args, config, grid_ctas) : run_bf16(args, config, grid_ctas);
}

}  // namespace tcgemm::sm100
