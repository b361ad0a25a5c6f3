// Launcher for sm90_gemm_persistent: tensor maps, shared-memory opt-in, grid.
// Included once per dtype (sm90_gemm_f16.cu, sm90_gemm_bf16.cu) so the two
// sets of kernels compile in parallel.
#pragma once

#include <algorithm>
#include <string>

#include <cuda_runtime.h>

#include "common/host/launch.cuh"
#include "common/host/tensor_map.hpp"
#include "sm90/sm90_gemm.hpp"
#include "sm90/sm90_gemm_kernel.cuh"

namespace tcgemm::sm90 {

using detail::launch_config;

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, bool PINGPONG>
std::string launch(const CUtensorMap& ta, const CUtensorMap& tb, const CUtensorMap& tc, const GemmArgs& args,
                   const Config& config, int* grid_ctas) {
  constexpr auto kernel = &sm90_gemm_persistent<Element, BLOCK_N, NUM_STAGES, A_MAJOR, B_MAJOR, CLUSTER_M, PINGPONG>;
  constexpr int kSmem = smem_bytes(BLOCK_N, NUM_STAGES);
  int resident = 0;
  if (std::string why = detail::setup_kernel_once<kernel>(kThreads, CLUSTER_M, kSmem, &resident); !why.empty())
    return why;

  const GroupedRaster raster{ceil_div(ceil_div(args.m, kBlockM), CLUSTER_M), ceil_div(args.n, BLOCK_N),
                             config.group_m};
  const int num_k_blocks = ceil_div(args.k, kBlockK);
  EpilogueParams epi{args.alpha, args.beta, args.c, args.ldc, static_cast<int>(args.m), static_cast<int>(args.n)};
  epi.debug_break_barrier = detail::debug_break_barrier_requested();
  const int clusters = std::min(config.num_ctas / CLUSTER_M, resident);

  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = launch_config(clusters * CLUSTER_M, kThreads, CLUSTER_M, kSmem, args.stream, attr);
  *grid_ctas = clusters * CLUSTER_M;
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tc, raster, num_k_blocks, epi);
  if (err != cudaSuccess) return std::string("kernel launch failed: ") + cudaGetErrorString(err);
  return {};
}

template <typename Element, int BLOCK_N, int CLUSTER_M, bool PINGPONG = false>
std::string launch_layout(const detail::GemmTensorMaps& maps, const GemmArgs& args, const Config& config,
                          int* grid_ctas) {
  return detail::with_operand_majors(args, [&](auto a, auto b) {
    return launch<Element, BLOCK_N, stages_for(BLOCK_N), decltype(a)::value, decltype(b)::value, CLUSTER_M, PINGPONG>(
        maps.a, maps.b, maps.c, args, config, grid_ctas);
  });
}

template <typename Element>
std::string run_typed(const GemmArgs& args, const Config& config, int* grid_ctas) {
  using namespace tcgemm::detail;
  GemmTensorMaps maps;
  if (std::string why = encode_gemm_maps(args, tma_operand_a(args, kBlockM, kBlockK),
                                         tma_operand_b(args, config.block_n, kBlockK, config.cluster_m),
                                         tma_output_c(args, kEpiPanel), &maps);
      !why.empty())
    return why;
  // The instantiated configurations: kTileConfigs.
  const int key = config.block_n * 100 + config.cluster_m * 10 + (config.pingpong ? 1 : 0);
  switch (key) {
    case 6410: return launch_layout<Element, 64, 1>(maps, args, config, grid_ctas);
    case 12810: return launch_layout<Element, 128, 1>(maps, args, config, grid_ctas);
    case 12811: return launch_layout<Element, 128, 1, true>(maps, args, config, grid_ctas);
    case 12820: return launch_layout<Element, 128, 2>(maps, args, config, grid_ctas);
    case 19210: return launch_layout<Element, 192, 1>(maps, args, config, grid_ctas);
    case 25610: return launch_layout<Element, 256, 1>(maps, args, config, grid_ctas);
    case 25620: return launch_layout<Element, 256, 2>(maps, args, config, grid_ctas);
  }
  return "no sm90 kernel for " + describe(config);
}

}  // namespace tcgemm::sm90
