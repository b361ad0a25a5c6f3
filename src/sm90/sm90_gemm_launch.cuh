// Launcher for sm90_gemm_persistent: tensor maps, shared-memory opt-in, grid.
// A dtype's kernels are spread over several translation units that compile in
// parallel (common/host/kernel_parts.hpp): sm90_gemm_{f16,bf16}.cu encodes the
// maps and holds the M-grouped kernels, and each sm90_gemm_{f16,bf16}_part<P>.cu
// (sm90_gemm_part.cuh) a share of kTileConfigs' (launch_part).
#pragma once

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <cuda_runtime.h>

#include "common/host/kernel_parts.hpp"
#include "common/host/launch.cuh"
#include "common/host/tensor_map.hpp"
#include "sm90/sm90_gemm.hpp"
#include "sm90/sm90_gemm_kernel.cuh"
#include "sm90/tile_counters.hpp"

namespace tcgemm::sm90 {

using detail::launch_config;

// The rows of A's TMA box: the tile's, except in a cluster along N, whose
// CTAs load half of it each.
inline int a_box_rows(const Config& config) {
  return config.cluster_n > 1 ? config.block_m / config.cluster_n : config.block_m;
}

// The rows of the tail map's box (GemmTensorMaps::tail): A's for the tiles
// of the last block-row (whose rows run past M), cut to M
// (detail::a_tail_box_rows) for tiles without a cluster or groups, else
// a_box_rows. 136 x 14336 x 4096 took 82 us with A's last 128-row box 8 rows
// inside M against 52 us with A padded to 256 rows (docs/PERF.md). The
// swapped kernel's is B's for its last token tile (`args` its operands:
// detail::swapped_operands), cut to the tokens there are
// (detail::b_tail_box_rows); its A's box is never cut.
inline int tail_rows(const GemmArgs& args, const Config& config) {
  if (config.swap_ab) return detail::b_tail_box_rows(args, config.block_n, config.block_n);
  const int rows = a_box_rows(config);
  if (config.cluster_m > 1 || config.cluster_n > 1 || args.grouped()) return rows;
  return detail::a_tail_box_rows(args, config.block_m, rows);
}

// `args`: the operands as the kernel takes them (its tiles, grid and maps);
// `call`: the call itself, whose epilogue the kernel runs. The same call but
// for the swapped kernel (SWAP_AB, Config::swap_ab), whose `args` are
// detail::swapped_operands(call) and whose epilogue stores C with the call's
// own M and N.
template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, int CLUSTER_N,
          bool PINGPONG, int BLOCK_M, bool FUSED, bool GROUPED = false, bool SWAP_AB = false>
std::string launch(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config, int* grid_ctas,
                   const GemmArgs& call) {
  constexpr auto kernel = &sm90_gemm_persistent<Element, BLOCK_N, NUM_STAGES, A_MAJOR, B_MAJOR, CLUSTER_M, CLUSTER_N,
                                                PINGPONG, BLOCK_M, FUSED, GROUPED, SWAP_AB>;
  constexpr int kSmem = smem_bytes(BLOCK_N, NUM_STAGES, BLOCK_M, b_slot_cols(BLOCK_N, BLOCK_M, B_MAJOR == Major::MN));
  // (An M-grouped kernel's slot table is static shared memory beside the dynamic.)
  static_assert(!GROUPED || kSmem + detail::kSlotTableBytes <= kSmemLimit,
                "the slot table fits beside the ring");
  constexpr int kCtaThreads = threads_for(BLOCK_M);
  constexpr int kClusterCtas = CLUSTER_M * CLUSTER_N;
  int resident = 0;
  if (std::string why = detail::setup_kernel_once<kernel>(kCtaThreads, kClusterCtas, kSmem, &resident); !why.empty())
    return why;

  // (The raster walks clusters: CLUSTER_M block-rows by CLUSTER_N block-columns
  // each. An M-grouped call's block-rows, its groups' slots, are counted on
  // the device.)
  const GroupedRaster raster{GROUPED ? 0 : ceil_div(ceil_div(args.m, BLOCK_M), CLUSTER_M),
                             ceil_div(ceil_div(args.n, BLOCK_N), CLUSTER_N), config.group_m,
                             static_cast<int>(args.batch)};
  const detail::MGroups groups{args.group_ends, static_cast<int>(args.groups), static_cast<int>(args.m)};
  const int num_k_blocks = ceil_div(args.k, kBlockK);
  EpilogueParams epi = detail::epilogue_params(call);
  epi.debug_break_barrier = detail::debug_break_barrier_requested();
  epi.paired = maps.c_pairs ? 1 : 0;  // (run_typed decided: pairs_c)
  epi.c_evict_first = config.c_evict_first ? 1 : 0;
  const int clusters = std::min(config.num_ctas / kClusterCtas, resident);
  // Counted tiles: the stream's counter (or this capture's), if there is
  // one to give; without, the kernel walks the static schedule.
  constexpr bool kCountable = counts_tiles(BLOCK_M, kClusterCtas, SWAP_AB, GROUPED);
  uint32_t* const counter =
      kCountable && config.schedule == Schedule::counted ? tile_counter(config.device, args.stream) : nullptr;

  detail::LaunchAttributes attrs{};
  const cudaLaunchConfig_t cfg =
      launch_config(clusters * kClusterCtas, kCtaThreads, kClusterCtas, kSmem, args.stream, attrs, config.pdl);
  *grid_ctas = clusters * kClusterCtas;
  const detail::BatchSteps steps = detail::batch_steps(args);
  const detail::LoadHints hints =
      detail::load_hints(raster, steps, GROUPED, args.m, args.n, args.k, config.l2_bytes);
  const cudaError_t err =
      cudaLaunchKernelEx(&cfg, kernel, maps.a, maps.b, maps.c, maps.tail, raster, num_k_blocks, epi, maps.tail_bytes,
                         steps, groups, counter, hints);
  if (err != cudaSuccess) return std::string("kernel launch failed: ") + cudaGetErrorString(err);
  return {};
}

template <typename Element, int BLOCK_N, int CLUSTER_M, bool PINGPONG = false, int BLOCK_M = kBlockM,
          int CLUSTER_N = 1>
std::string launch_layout(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config,
                          int* grid_ctas) {
  return detail::with_operand_majors(args, [&](auto a, auto b) -> std::string {
    constexpr Major kA = decltype(a)::value, kB = decltype(b)::value;
    if constexpr (!builds_for_b(BLOCK_N, kB == Major::K)) {
      return "no sm90 kernel for " + describe(config) + " with B stored MN-major (op_b = N)";
    } else if constexpr (!builds_for_layout(BLOCK_M, BLOCK_N, kA == Major::K, kB == Major::K)) {
      return "no sm90 kernel for " + describe(config) + " with op_a = " + to_string(args.op_a) +
             ", op_b = " + to_string(args.op_b) + ": the 8-row tile is built for op_a = N, op_b = T only";
    } else {
      if constexpr (has_shallow_ring(BLOCK_N, BLOCK_M)) {
        if (config.stages == kShallowStages && !args.fused_epilogue())
          return launch<Element, BLOCK_N, kShallowStages, kA, kB, CLUSTER_M, CLUSTER_N, PINGPONG, BLOCK_M, false>(
              maps, args, config, grid_ctas, args);
      }
      return detail::with_epilogue_kind(args, [&](auto fused) {
        return launch<Element, BLOCK_N, stages_for(BLOCK_N, BLOCK_M), kA, kB, CLUSTER_M, CLUSTER_N, PINGPONG,
                      BLOCK_M, decltype(fused)::value>(maps, args, config, grid_ctas, args);
      });
    }
  });
}

// The swapped kernel BLOCK_M x BLOCK_N (its tiles BLOCK_M of C's columns by
// BLOCK_N of its rows) for `call`, whose operands it takes as `ops`
// (detail::swapped_operands(call)); built for the call's A K-major (op_a =
// N: the tokens, its wgmma B operand) and B either way (its A operand:
// op_b = T K-major, op_b = N MN-major; check_layout).
template <typename Element, int BLOCK_N, int BLOCK_M = kBlockM>
std::string launch_swapped(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const Config& config,
                           int* grid_ctas, const GemmArgs& call) {
  return detail::with_operand_majors(ops, [&](auto a, auto b) -> std::string {
    constexpr Major kA = decltype(a)::value, kB = decltype(b)::value;
    if constexpr (kB != Major::K) {
      return "no sm90 kernel for " + describe(config) + " with op_a = " + to_string(call.op_a) +
             ": the swapped kernel is built for op_a = N only";
    } else {
      return detail::with_epilogue_kind(call, [&](auto fused) {
        return launch<Element, BLOCK_N, stages_for(BLOCK_N, BLOCK_M), kA, kB, 1, 1, false, BLOCK_M,
                      decltype(fused)::value, false, true>(maps, ops, config, grid_ctas, call);
      });
    }
  });
}

// An M-grouped call (GemmArgs::groups) in one of kGroupedTileConfigs, B
// stored either way (A is K-major: check_args).
template <typename Element, int BLOCK_N, bool PINGPONG, int BLOCK_M>
std::string launch_grouped(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config,
                           int* grid_ctas) {
  const auto run = [&](auto b) {
    return launch<Element, BLOCK_N, stages_for(BLOCK_N, BLOCK_M), Major::K, decltype(b)::value, 1, 1, PINGPONG,
                  BLOCK_M, false, true>(maps, args, config, grid_ctas, args);
  };
  if (args.op_a != Op::N) return "an M-grouped call needs A stored K-major (op_a = N)";
  return args.op_b == Op::T ? run(std::integral_constant<Major, Major::K>{})
                            : run(std::integral_constant<Major, Major::MN>{});
}

// Launches the kernel of kTileConfigs that `config` names (its width, rows,
// cluster, ping-pong and swap) if it is part Part's (detail::kKernelParts),
// for `call`, whose operands the kernel takes as `ops`
// (detail::swapped_operands(call) for a swapped configuration, else `call`);
// nothing if it is not Part's. Defined in sm90_gemm_part.cuh and instantiated
// by the part's translation unit only.
template <typename Element, size_t Part>
std::optional<std::string> launch_part(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const GemmArgs& call,
                                       const Config& config, int* grid_ctas);

template <typename Element>
std::string run_typed(const GemmArgs& args, const Config& config, int* grid_ctas) {
  using namespace tcgemm::detail;
  GemmTensorMaps maps;
  // (The 64- and 8-row tiles store C from registers: no map for it.)
  const Tma2D c_map = tma_output_c(args, kEpiPanel);
  // The operands as the kernel takes them: the call's, or for the swapped
  // kernel B as A and A as B (C's map stays the call's). (Built once, and
  // only for the swapped kernel: no copy on the other calls' launch path.)
  std::optional<GemmArgs> swapped;
  if (config.swap_ab) swapped = swapped_operands(args);
  const GemmArgs& ops = swapped ? *swapped : args;
  // A's map, and its tail map for the last block-row (the swapped kernel:
  // B's, for the last token tile). With one block-row (token tile) every
  // tile is the last: the operand's map takes the cut box itself and the
  // tail map is a copy (one encode on a decoding call's launch path, not two).
  const int tail = tail_rows(ops, config);
  const int a_rows = !config.swap_ab && ops.m <= config.block_m ? tail : a_box_rows(config);
  const int b_rows = config.swap_ab && ops.n <= config.block_n ? tail : config.block_n;
  // B's map: its box is b_rows of a K-major B, or one panel of an MN-major
  // one: of whole 64 columns where the kernel holds B so (b_slot_cols).
  const int b_map_cols = ops.op_b == Op::N ? b_slot_cols(b_rows, config.block_m, true) : b_rows;
  // C's map: none for the tiles that store from registers, the pair map for
  // paired stores (decided here, once a call: the kernel is told through
  // maps.c_pairs), else the panel map.
  const bool pairs = pairs_c(args, config.block_m, config.block_n, config.swap_ab, config.pingpong);
  if (std::string why = encode_gemm_maps(ops, tma_operand_a(ops, a_rows, kBlockK),
                                         tma_operand_b(ops, b_map_cols, kBlockK, config.cluster_m),
                                         stores_from_registers(config.block_m) || pairs ? nullptr : &c_map, &maps);
      !why.empty())
    return why;
  if (pairs) {
    if (const CUresult r = encode_tma_pairs(&maps.c, args.dtype, args.c, tma_output_c_pairs(args)); r != CUDA_SUCCESS)
      return "cuTensorMapEncodeTiled failed for C's pair map (CUresult " + std::to_string(r) + ")";
    maps.c_pairs = true;
  }
  if (std::string why = config.swap_ab ? encode_b_tail(ops, b_rows, tail, kBlockK, &maps)
                                       : encode_a_tail(ops, a_rows, tail, kBlockK, &maps);
      !why.empty())
    return why;
  // The configurations built: kGroupedTileConfigs for an M-grouped call, else kTileConfigs.
  if (args.grouped()) {
    static_assert(std::size(kGroupedTileConfigs) == 3, "a launch below for each built configuration");
    if (config.block_m == kBlockM && config.block_n == 128 && config.pingpong)
      return launch_grouped<Element, 128, true, kBlockM>(maps, args, config, grid_ctas);
    if (config.block_m == kBlockM && config.block_n == 256 && !config.pingpong)
      return launch_grouped<Element, 256, false, kBlockM>(maps, args, config, grid_ctas);
    if (config.block_m == kSmallBlockM && config.block_n == 128)
      return launch_grouped<Element, 128, false, kSmallBlockM>(maps, args, config, grid_ctas);
    return "no M-grouped sm90 kernel for " + describe(config);
  }
  if (auto run = launch_first_part([&](auto part) {
        return launch_part<Element, decltype(part)::value>(maps, ops, args, config, grid_ctas);
      }))
    return *run;
  return "no sm90 kernel for " + describe(config);
}

}  // namespace tcgemm::sm90
