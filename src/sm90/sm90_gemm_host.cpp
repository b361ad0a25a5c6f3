#include "common/host/tensor_map.hpp"
#include "common/m_groups.hpp"
#include "sm90/sm90_gemm.hpp"

namespace tcgemm::sm90 {

std::string can_implement(const GemmArgs& args) {
  using namespace tcgemm::detail;
  // The narrowest 128-row tile (select_config keeps 64-row tiles to calls whose count fits).
  if (!tile_count_fits_int32(args.m, args.n, kBlockM, 64, args.batch))
    return args.batch > 1 ? "batch x M x N has more output tiles than 32-bit tile indices reach"
                          : "M x N has more output tiles than 32-bit tile indices reach";
  // (An M-grouped call: the most slots its groups can take, of its narrowest tile, by N's blocks.)
  if (args.grouped() && !tile_count_fits_int32(max_group_slots(args.m, args.groups, kSmallBlockM), args.n, 1, 128))
    return "the groups' M x N has more output tiles than 32-bit tile indices reach";
  // Box sizes do not matter for these checks; use the widest config.
  return gemm_maps_unsupported_reason(args, tma_operand_a(args, kBlockM, kBlockK), tma_operand_b(args, 256, kBlockK),
                                      tma_output_c(args, kEpiPanel));
}

std::string check_config_options(const Options& o) {
  if (o.block_n != 0 && !is_tile_width(o.block_n)) {
    std::string widths;
    for (int w : kTileWidths) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
    return "Options::block_n must be 0 (automatic) or one of " + widths + ", not " + std::to_string(o.block_n);
  }
  if (o.block_m != 0 && o.block_m != kBlockM && o.block_m != kSmallBlockM && o.block_m != kDecodeBlockM &&
      o.block_m != kTallBlockM)
    return "Options::block_m must be 0 (automatic), " + std::to_string(kDecodeBlockM) + ", " +
           std::to_string(kSmallBlockM) + ", " + std::to_string(kBlockM) + " or " + std::to_string(kTallBlockM) +
           ", not " + std::to_string(o.block_m);
  // The swapped kernel: 128 rows (or 256: the tall swapped tile), no cluster
  // or ping-pong, a swapped width of that height or none; a width built only
  // swapped (136, 152, 176, 200, 208, 224) needs it.
  if (o.swap_ab) {
    const int height = o.block_m == 0 ? kBlockM : o.block_m;
    if ((height != kBlockM && height != kTallBlockM) ||
        (o.block_n != 0 && !is_tile_config(o.block_n, 1, false, height, 1, true)) || o.cluster_m > 1 ||
        o.cluster_n > 1 || o.pingpong) {
      std::string widths[2];
      for (const TileConfig& c : kTileConfigs)
        if (c.swap_ab) {
          std::string& list = widths[c.block_m == kTallBlockM ? 1 : 0];
          list += (list.empty() ? "" : ", ") + std::to_string(c.block_n);
        }
      return "Options::swap_ab runs tiles without a cluster or ping-pong, block_m 0 or 128 with block_n 0 (automatic) "
             "or one of " + widths[0] + ", or block_m 256 with block_n 0 or one of " + widths[1] +
             "; asked for block_n=" + std::to_string(o.block_n) + " block_m=" + std::to_string(o.block_m) +
             " cluster_m=" + std::to_string(o.cluster_m) + " cluster_n=" + std::to_string(o.cluster_n) +
             " pingpong=" + (o.pingpong ? "true" : "false");
    }
    return {};
  }
  if (o.block_n != 0 && is_swap_width(o.block_n) && !is_tile_config(o.block_n, 1, false, kBlockM) &&
      !is_tile_config(o.block_n, 1, false, kSmallBlockM) && !is_tile_config(o.block_n, 1, false, kDecodeBlockM))
    return "Options::block_n=" + std::to_string(o.block_n) +
           " is built only for the sm90 swapped kernel (Options::swap_ab = true)";
  // Unnamed, the height is 128 rows, or 64 for a width only 64-row tiles have.
  const int block_m = o.block_m != 0                                             ? o.block_m
                      : o.block_n == 0 || is_tile_config(o.block_n, 1, false, kBlockM) ? kBlockM
                                                                                       : kSmallBlockM;
  // (A cluster along N names its configuration with cluster_m 0 or 1.)
  const int cluster_n = o.cluster_n != 0 ? o.cluster_n : 1;
  const int named_cluster_m = o.cluster_m == 0 && o.cluster_n != 0 ? 1 : o.cluster_m;
  const bool named = (o.cluster_m != 0 || o.cluster_n != 0 || o.pingpong) &&
                     !is_tile_config(o.block_n, named_cluster_m, o.pingpong, block_m, cluster_n);
  const bool height = o.block_m != 0 && o.block_n != 0 &&
                      !is_tile_config(o.block_n, o.cluster_m != 0 ? o.cluster_m : 1, o.pingpong, o.block_m, cluster_n);
  if (named || height)
    return "Options block_n=" + std::to_string(o.block_n) + " cluster_m=" + std::to_string(o.cluster_m) +
           " pingpong=" + (o.pingpong ? "true" : "false") +
           (o.block_m != 0 ? " block_m=" + std::to_string(o.block_m) : std::string()) +
           (o.cluster_n != 0 ? " cluster_n=" + std::to_string(o.cluster_n) : std::string()) +
           " is not a built-in configuration (kTileConfigs)";
  return {};
}

std::string check_layout(const GemmArgs& args, const Options& o) {
  // What is forced must be built for the call's layout: builds_for_layout is
  // the rule (what is not forced is chosen to fit; 128 stands for any width
  // of whole panels, built for both layouts of B). The messages say which
  // part of it the call misses.
  const bool a_k_major = args.op_a == Op::N, b_k_major = args.op_b == Op::T;
  if (builds_for_layout(o.block_m != 0 ? o.block_m : kBlockM, o.block_n != 0 ? o.block_n : 128, a_k_major, b_k_major,
                        o.swap_ab))
    return {};
  if (o.block_m == kDecodeBlockM)
    return "Options::block_m=" + std::to_string(kDecodeBlockM) +
           " (the decode tile) is built for A and B stored K-major only (op_a = N, op_b = T: x @ W^T); "
           "this call has op_a = " + to_string(args.op_a) + ", op_b = " + to_string(args.op_b);
  if (o.swap_ab)
    return "Options::swap_ab (the swapped kernel) is built for A stored K-major only (op_a = N: the tokens, "
           "B either way); this call has op_a = " + std::string(to_string(args.op_a));
  return "Options::block_n=" + std::to_string(o.block_n) +
         " (not whole 16-column panels) is built for B stored K-major only (op_b = T, the nn.Linear layout); "
         "this call has op_b = N";
}

std::string check_grouped_options(const GemmArgs& args, const Options& o) {
  (void)args;
  if (o.cluster_m > 1 || o.cluster_n > 1)
    return "an M-grouped call runs without clusters (Options::cluster_m and cluster_n 0 or 1)";
  if (o.swap_ab) return "an M-grouped call runs unswapped (Options::swap_ab false)";
  const bool forced = o.block_n != 0 || o.block_m != 0 || o.pingpong;
  if (forced && grouped_tile_config(o.block_n, o.block_m, o.pingpong) == nullptr) {
    std::string built;
    for (const TileConfig& c : kGroupedTileConfigs)
      built += (built.empty() ? "" : ", ") + std::to_string(c.block_m) + "x" + std::to_string(c.block_n) +
               (c.pingpong ? " ping-pong" : "");
    return "Options block_n=" + std::to_string(o.block_n) + " block_m=" + std::to_string(o.block_m) +
           " pingpong=" + (o.pingpong ? "true" : "false") +
           " names no configuration built for M-grouped calls (kGroupedTileConfigs: " + built + ")";
  }
  return {};
}

std::string check_options(const Options& o, bool grouped) {
  if (!grouped) {
    if (std::string why = check_config_options(o); !why.empty()) return why;
  }
  if (o.schedule == Schedule::cluster_launch_control)
    return "Options::schedule = cluster_launch_control needs an sm_100 GPU (Cluster Launch Control is Blackwell's)";
  return {};
}

std::string kernel_name(const GemmArgs& args, const KernelConfig& config) {
  return std::string("sm90_gemm_persistent<") + to_string(args.dtype) + "," + to_string(args.op_a) +
         to_string(args.op_b) + "," + describe(config) + (args.grouped() ? ", M-grouped" : "") + ">";
}

std::string run(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return args.dtype == DType::f16 ? run_f16(args, config, grid_ctas) : run_bf16(args, config, grid_ctas);
}

}  // namespace tcgemm::sm90
