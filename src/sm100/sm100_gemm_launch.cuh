// Launcher for sm100_gemm: tensor maps, shared-memory opt-in, grid.
// A dtype's kernels are spread over several translation units that compile in
// parallel (common/host/kernel_parts.hpp): sm100_gemm_{f16,bf16}.cu encodes
// the maps and holds the M-grouped kernels, and each
// sm100_gemm_{f16,bf16}_part<P>.cu (sm100_gemm_part.cuh) a share of
// kSm100TileConfigs' (launch_part).
#pragma once

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include <cuda_runtime.h>

#include "common/host/kernel_parts.hpp"
#include "common/host/launch.cuh"
#include "common/host/tensor_map.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm100/sm100_gemm_kernel.cuh"

namespace tcgemm::sm100 {

// The rows of A's box for the single-CTA tiles of the last block-row (whose
// rows run past M): cut to M (detail::a_tail_box_rows; every tile at M <
// the tile's rows), as on Hopper; a pair's and an M-grouped call's tiles
// keep the 128-row box (MainloopLoad::stage_bytes says why).
inline int a_tail_rows(const GemmArgs& args, const Config& config) {
  if (config.cta_group() != 1 || args.grouped()) return kBlockM;
  return detail::a_tail_box_rows(args, config.cta_rows(), config.cta_rows());
}

// `args`: the operands as the kernel takes them (its tiles, grid and maps);
// `call`: the call itself, whose epilogue the kernel runs. The same call but
// for the swapped tiles (SWAP_AB), whose `args` are
// detail::swapped_operands(call).
template <typename Element, int BLOCK_N, Major A_MAJOR, Major B_MAJOR, Schedule SCHEDULE, int CTA_GROUP, bool FUSED,
          bool GROUPED = false, int BLOCK_M = kBlockM, bool SWAP_AB = false>
std::string launch(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config, int* grid_ctas,
                   const GemmArgs& call) {
  // (An M-grouped kernel's slot table is static shared memory beside the ring: grouped_stages_for.)
  constexpr int kStages = GROUPED ? grouped_stages_for(BLOCK_N) : stages_for(BLOCK_N, CTA_GROUP, BLOCK_M, SWAP_AB);
  constexpr auto kernel = &sm100_gemm<Element, BLOCK_N, kStages, A_MAJOR, B_MAJOR, SCHEDULE, CTA_GROUP, FUSED,
                                      GROUPED, BLOCK_M, SWAP_AB>;
  constexpr int kSmem = smem_bytes(BLOCK_N, kStages, CTA_GROUP, BLOCK_M, SWAP_AB);
  int resident = 0;
  if (std::string why = detail::setup_kernel_once<kernel>(kThreads, CTA_GROUP, kSmem, &resident); !why.empty())
    return why;

  // (An M-grouped call's block-rows, its groups' slots, are counted on the device.)
  const GroupedRaster raster{GROUPED ? 0 : ceil_div(args.m, BLOCK_M * CTA_GROUP), ceil_div(args.n, BLOCK_N),
                             config.group_m, static_cast<int>(args.batch)};
  const detail::MGroups groups{args.group_ends, static_cast<int>(args.groups), static_cast<int>(args.m)};
  const int num_k_blocks = ceil_div(args.k, kBlockK);
  detail::EpilogueParams epi = detail::epilogue_params(call);
  epi.debug_break_barrier = detail::debug_break_barrier_requested();
  epi.c_evict_first = config.c_evict_first ? 1 : 0;
  // Cluster Launch Control: one cluster per tile, however many fit at once.
  // Persistent: no more clusters than fit at once.
  const int clusters = SCHEDULE == Schedule::persistent ? std::min(config.grid_clusters, resident)
                                                        : config.grid_clusters;
  detail::LaunchAttributes attrs{};
  const cudaLaunchConfig_t cfg = detail::launch_config(clusters * CTA_GROUP, kThreads, CTA_GROUP, kSmem,
                                                       args.stream, attrs, config.pdl);
  *grid_ctas = clusters * CTA_GROUP;
  const detail::BatchSteps steps = detail::batch_steps(args);
  const detail::LoadHints hints =
      detail::load_hints(raster, steps, GROUPED, args.m, args.n, args.k, config.l2_bytes);
  const cudaError_t err =
      cudaLaunchKernelEx(&cfg, kernel, maps.a, maps.b, maps.c, maps.tail, raster, num_k_blocks, epi, maps.tail_bytes,
                         steps, groups, hints);
  if (err != cudaSuccess) return std::string("kernel launch failed: ") + cudaGetErrorString(err);
  return {};
}

template <typename Element, int BLOCK_N, Schedule SCHEDULE, int CTA_GROUP = kCtaGroup, int BLOCK_M = kBlockM>
std::string launch_layout(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config,
                          int* grid_ctas) {
  return detail::with_operand_majors(args, [&](auto a, auto b) -> std::string {
    constexpr Major kA = decltype(a)::value, kB = decltype(b)::value;
    if constexpr (!builds_for_b(BLOCK_N, CTA_GROUP, kB == Major::K)) {
      return "no sm100 kernel for " + describe(config) + " with B stored MN-major (op_b = N)";
    } else {
      return detail::with_epilogue_kind(args, [&](auto fused) {
        return launch<Element, BLOCK_N, kA, kB, SCHEDULE, CTA_GROUP, decltype(fused)::value, false, BLOCK_M>(
            maps, args, config, grid_ctas, args);
      });
    }
  });
}

// An M-grouped call (GemmArgs::groups) on the single-CTA tile BLOCK_N wide
// (kSm100GroupedWidths), B stored either way (A is K-major: check_args).
template <typename Element, int BLOCK_N>
std::string launch_grouped(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config,
                           int* grid_ctas) {
  const auto run = [&](auto b) {
    return launch<Element, BLOCK_N, Major::K, decltype(b)::value, Schedule::persistent, 1, false, true>(
        maps, args, config, grid_ctas, args);
  };
  if (args.op_a != Op::N) return "an M-grouped call needs A stored K-major (op_a = N)";
  return args.op_b == Op::T ? run(std::integral_constant<Major, Major::K>{})
                            : run(std::integral_constant<Major, Major::MN>{});
}

// The swapped tile BLOCK_N wide (Sm100TileConfig::swap_ab) for `call`, whose
// operands the kernel takes as `ops` (detail::swapped_operands(call)): its
// A is the call's B, stored either way; its B the call's A, K-major
// (op_a = N: check_layout refuses the other).
template <typename Element, int BLOCK_N>
std::string launch_swapped(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const Config& config,
                           int* grid_ctas, const GemmArgs& call) {
  return detail::with_operand_majors(ops, [&](auto a, auto b) -> std::string {
    constexpr Major kA = decltype(a)::value;
    if constexpr (decltype(b)::value != Major::K) {
      return "the swapped sm100 tiles are built for A stored K-major only (op_a = N)";
    } else {
      return detail::with_epilogue_kind(call, [&](auto fused) {
        return launch<Element, BLOCK_N, kA, Major::K, Schedule::persistent, 1, decltype(fused)::value, false, kBlockM,
                      true>(maps, ops, config, grid_ctas, call);
      });
    }
  });
}

// Launches the kernel of kSm100TileConfigs that `config` names (its width,
// schedule, CTA group, rows a CTA and whether swapped) if it is part Part's
// (detail::kKernelParts), for `call`, whose operands the kernel takes as `ops`
// (detail::swapped_operands(call) for a swapped tile, else `call`); nothing if
// it is not Part's. Defined in sm100_gemm_part.cuh and instantiated by the
// part's translation unit only.
template <typename Element, size_t Part>
std::optional<std::string> launch_part(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const GemmArgs& call,
                                       const Config& config, int* grid_ctas);

template <typename Element>
std::string run_typed(const GemmArgs& args, const Config& config, int* grid_ctas) {
  using namespace tcgemm::detail;
  GemmTensorMaps maps;
  // B: each CTA of a pair loads half of the tile's columns (the map's box is
  // half as wide for a K-major B; an MN-major B is loaded in 64-column
  // panels); a single-CTA tile loads all of them (8, 16, 32, 40, 48 and 96
  // wide: B K-major only, builds_for_b). C is stored in panels of an
  // epilogue warp's rows (16 for the 64-row tiles).
  const int rows = config.cta_rows();
  const Tma2D c_map = tma_output_c(args, kEpiPanelCols, epilogue_rows(rows));
  // The operands as the kernel takes them: the call's, or for the swapped
  // tiles B as A and A as B, whose epilogue stores C from registers (no map
  // for C). (Built once, and only for the swapped tiles: no copy on the
  // other calls' launch path.)
  std::optional<GemmArgs> swapped;
  if (config.swap_ab) swapped = swapped_operands(args);
  const GemmArgs& ops = swapped ? *swapped : args;
  // The tail map: A's for the last block-row, or for the swapped tiles B's
  // for the last token tile, its box cut to the rows (tokens) there are,
  // rounded up to 8. With one block-row (token tile) the operand's map
  // takes the cut box itself, the tail map a copy; as on Hopper.
  const int tail = config.swap_ab ? detail::b_tail_box_rows(ops, config.block_n, config.block_n)
                                  : a_tail_rows(args, config);
  const int a_rows = !config.swap_ab && ops.m <= rows ? tail : rows;
  const int b_rows = config.swap_ab && ops.n <= config.block_n ? tail : config.block_n;
  if (std::string why = encode_gemm_maps(ops, tma_operand_a(ops, a_rows, kBlockK),
                                         tma_operand_b(ops, b_rows, kBlockK, config.cta_group()),
                                         config.swap_ab ? nullptr : &c_map, &maps);
      !why.empty())
    return why;
  if (std::string why = config.swap_ab ? encode_b_tail(ops, b_rows, tail, kBlockK, &maps)
                                       : encode_a_tail(ops, a_rows, tail, kBlockK, &maps);
      !why.empty())
    return why;
  const bool clc = config.schedule == Schedule::cluster_launch_control;
  // The instantiated configurations: kSm100GroupedWidths for an M-grouped call, else kSm100TileConfigs.
  if (args.grouped()) {
    static_assert(std::size(kSm100GroupedWidths) == 2, "a launch below for each built width");
    if (config.cta_group() == 1 && !clc && config.block_n == 128)
      return launch_grouped<Element, 128>(maps, args, config, grid_ctas);
    if (config.cta_group() == 1 && !clc && config.block_n == 256)
      return launch_grouped<Element, 256>(maps, args, config, grid_ctas);
    return "no M-grouped sm100 kernel for " + describe(config);
  }
  if (auto run = launch_first_part([&](auto part) {
        return launch_part<Element, decltype(part)::value>(maps, ops, args, config, grid_ctas);
      }))
    return *run;
  return "no sm100 kernel for " + describe(config);
}

}  // namespace tcgemm::sm100
