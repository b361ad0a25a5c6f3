// Launcher for sm90_gemm_persistent: tensor maps, shared-memory opt-in, grid.
// Included once per dtype (sm90_gemm_f16.cu, sm90_gemm_bf16.cu) so the two
// sets of kernels compile in parallel.
#pragma once

#include <algorithm>
#include <array>
#include <mutex>
#include <string>

#include <cuda_runtime.h>

#include "common/tensor_map.hpp"
#include "sm90/sm90_gemm.hpp"
#include "sm90/sm90_gemm_kernel.cuh"

namespace tcgemm::sm90 {

// A launch of `ctas` CTAs of kThreads threads in clusters of `cluster_m`
// along x. `attr` must outlive the launch configuration.
inline cudaLaunchConfig_t launch_config(int ctas, int cluster_m, int smem, cudaStream_t stream,
                                        cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(ctas);
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster_m;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = cluster_m > 1 ? 1 : 0;
  return cfg;
}

// How many clusters of `cluster_m` CTAs of this kernel can be resident at
// once on the current device: the persistent grid. Not num_sms / cluster_m:
// clusters must fit inside a GPC, and the GPCs' SM counts differ.
template <typename Kernel>
int max_resident_clusters(Kernel kernel, int cluster_m, int smem, int num_sms, cudaError_t* err) {
  if (cluster_m == 1) return num_sms;
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = launch_config(cluster_m * (num_sms / cluster_m), cluster_m, smem, nullptr, attr);
  int clusters = 0;
  *err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg);
  return clusters;
}

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR, int CLUSTER_M, bool PINGPONG>
std::string launch(const CUtensorMap& ta, const CUtensorMap& tb, const CUtensorMap& tc, const GemmArgs& args,
                   const Config& config, int* grid_ctas) {
  auto* kernel = &sm90_gemm_persistent<Element, BLOCK_N, NUM_STAGES, A_MAJOR, B_MAJOR, CLUSTER_M, PINGPONG>;
  constexpr int kSmem = smem_bytes(BLOCK_N, NUM_STAGES);
  // Once per kernel and device (attributes are per device): opt in to more
  // than 48 KiB of dynamic shared memory and count the resident clusters.
  struct PerDevice {
    std::once_flag once;
    cudaError_t err = cudaSuccess;
    int clusters = 0;
  };
  static std::array<PerDevice, 64> per_device;
  int device = 0;
  cudaGetDevice(&device);
  if (device < 0 || device >= 64) return "device index " + std::to_string(device) + " is beyond the 64 supported";
  PerDevice& d = per_device[device];
  std::call_once(d.once, [&] {
    d.err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
    int sms = 0;
    if (d.err == cudaSuccess) d.err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (d.err == cudaSuccess) d.clusters = max_resident_clusters(kernel, CLUSTER_M, kSmem, sms, &d.err);
  });
  if (d.err != cudaSuccess)
    return std::string("kernel setup (shared memory opt-in, cluster occupancy) failed: ") + cudaGetErrorString(d.err);
  if (d.clusters < 1) return "no cluster of " + std::to_string(CLUSTER_M) + " CTAs of this kernel fits on the device";

  const GroupedRaster raster{ceil_div(ceil_div(args.m, kBlockM), CLUSTER_M), ceil_div(args.n, BLOCK_N),
                             config.group_m};
  const int num_k_blocks = ceil_div(args.k, kBlockK);
  const EpilogueParams epi{args.alpha, args.beta, args.c, args.ldc, static_cast<int>(args.m), static_cast<int>(args.n)};
  const int clusters = std::min(config.num_ctas / CLUSTER_M, d.clusters);

  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = launch_config(clusters * CLUSTER_M, CLUSTER_M, kSmem, args.stream, attr);
  *grid_ctas = clusters * CLUSTER_M;
  const cudaError_t err = cudaLaunchKernelEx(&cfg, kernel, ta, tb, tc, raster, num_k_blocks, epi);
  if (err != cudaSuccess) return std::string("kernel launch failed: ") + cudaGetErrorString(err);
  return {};
}

template <typename Element, int BLOCK_N, int CLUSTER_M, bool PINGPONG = false>
std::string launch_layout(const CUtensorMap& ta, const CUtensorMap& tb, const CUtensorMap& tc, const GemmArgs& args,
                          const Config& config, int* grid_ctas) {
  constexpr int S = stages_for(BLOCK_N);
  // op_a = N: A is M x K (K contiguous); op_b = N: B is K x N (N contiguous).
  if (args.op_a == Op::N && args.op_b == Op::N)
    return launch<Element, BLOCK_N, S, Major::K, Major::MN, CLUSTER_M, PINGPONG>(ta, tb, tc, args, config, grid_ctas);
  if (args.op_a == Op::N && args.op_b == Op::T)
    return launch<Element, BLOCK_N, S, Major::K, Major::K, CLUSTER_M, PINGPONG>(ta, tb, tc, args, config, grid_ctas);
  if (args.op_a == Op::T && args.op_b == Op::N)
    return launch<Element, BLOCK_N, S, Major::MN, Major::MN, CLUSTER_M, PINGPONG>(ta, tb, tc, args, config, grid_ctas);
  return launch<Element, BLOCK_N, S, Major::MN, Major::K, CLUSTER_M, PINGPONG>(ta, tb, tc, args, config, grid_ctas);
}

template <typename Element>
std::string run_typed(const GemmArgs& args, const Config& config, int* grid_ctas) {
  using namespace tcgemm::detail;
  CUtensorMap ta, tb, tc;
  struct Map {
    CUtensorMap* out;
    const void* base;
    Tma2D params;
    const char* name;
  };
  const Map maps[] = {{&ta, args.a, tma_operand_a(args, kBlockM, kBlockK), "A"},
                      {&tb, args.b, tma_operand_b(args, config.block_n, kBlockK, config.cluster_m), "B"},
                      {&tc, args.c, tma_output_c(args, kEpiPanel), "C"}};
  for (const auto& m : maps) {
    const CUresult r = encode_tma_2d(m.out, args.dtype, m.base, m.params);
    if (r != CUDA_SUCCESS)
      return std::string("cuTensorMapEncodeTiled failed for ") + m.name + " (CUresult " + std::to_string(r) + ")";
  }
  // The instantiated configurations: kTileConfigs.
  const int key = config.block_n * 100 + config.cluster_m * 10 + (config.pingpong ? 1 : 0);
  switch (key) {
    case 6410: return launch_layout<Element, 64, 1>(ta, tb, tc, args, config, grid_ctas);
    case 12810: return launch_layout<Element, 128, 1>(ta, tb, tc, args, config, grid_ctas);
    case 12811: return launch_layout<Element, 128, 1, true>(ta, tb, tc, args, config, grid_ctas);
    case 12820: return launch_layout<Element, 128, 2>(ta, tb, tc, args, config, grid_ctas);
    case 19210: return launch_layout<Element, 192, 1>(ta, tb, tc, args, config, grid_ctas);
    case 25610: return launch_layout<Element, 256, 1>(ta, tb, tc, args, config, grid_ctas);
    case 25620: return launch_layout<Element, 256, 2>(ta, tb, tc, args, config, grid_ctas);
  }
  return "no sm90 kernel for " + describe(config);
}

}  // namespace tcgemm::sm90
