// Launcher for sm90_gemm_persistent: tensor maps, shared-memory opt-in, grid.
// Included once per dtype (sm90_gemm_f16.cu, sm90_gemm_bf16.cu) so the two
// sets of kernels compile in parallel.
#pragma once

#include <array>
#include <mutex>
#include <string>

#include <cuda_runtime.h>

#include "common/tensor_map.hpp"
#include "sm90/sm90_gemm.hpp"
#include "sm90/sm90_gemm_kernel.cuh"

namespace tcgemm::sm90 {

template <typename Element, int BLOCK_N, int NUM_STAGES, Major A_MAJOR, Major B_MAJOR>
std::string launch(const CUtensorMap& ta, const CUtensorMap& tb, const CUtensorMap& tc, const GemmArgs& args,
                   const Config& config) {
  auto* kernel = &sm90_gemm_persistent<Element, BLOCK_N, NUM_STAGES, A_MAJOR, B_MAJOR>;
  constexpr int kSmem = smem_bytes(BLOCK_N, NUM_STAGES);
  // Opt in to more than 48 KiB of dynamic shared memory, once per kernel and
  // device (the attribute is per device).
  static std::array<std::once_flag, 64> once;
  static std::array<cudaError_t, 64> opt_in{};
  int device = 0;
  cudaGetDevice(&device);
  if (device < 0 || device >= 64) return "device index " + std::to_string(device) + " is beyond the 64 supported";
  std::call_once(once[device], [&] {
    opt_in[device] = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  });
  if (opt_in[device] != cudaSuccess)
    return std::string("cudaFuncSetAttribute(max dynamic shared memory) failed: ") + cudaGetErrorString(opt_in[device]);

  const GroupedRaster raster{ceil_div(args.m, kBlockM), ceil_div(args.n, BLOCK_N), config.group_m};
  const int num_k_blocks = ceil_div(args.k, kBlockK);
  const EpilogueParams epi{args.alpha, args.beta, args.c, args.ldc, static_cast<int>(args.m), static_cast<int>(args.n)};
  kernel<<<config.num_ctas, kThreads, kSmem, args.stream>>>(ta, tb, tc, raster, num_k_blocks, epi);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return std::string("kernel launch failed: ") + cudaGetErrorString(err);
  return {};
}

template <typename Element, int BLOCK_N, int NUM_STAGES>
std::string launch_layout(const CUtensorMap& ta, const CUtensorMap& tb, const CUtensorMap& tc, const GemmArgs& args,
                          const Config& config) {
  // op_a = N: A is M x K (K contiguous); op_b = N: B is K x N (N contiguous).
  if (args.op_a == Op::N && args.op_b == Op::N)
    return launch<Element, BLOCK_N, NUM_STAGES, Major::K, Major::MN>(ta, tb, tc, args, config);
  if (args.op_a == Op::N && args.op_b == Op::T)
    return launch<Element, BLOCK_N, NUM_STAGES, Major::K, Major::K>(ta, tb, tc, args, config);
  if (args.op_a == Op::T && args.op_b == Op::N)
    return launch<Element, BLOCK_N, NUM_STAGES, Major::MN, Major::MN>(ta, tb, tc, args, config);
  return launch<Element, BLOCK_N, NUM_STAGES, Major::MN, Major::K>(ta, tb, tc, args, config);
}

template <typename Element>
std::string run_typed(const GemmArgs& args, const Config& config) {
  using namespace tcgemm::detail;
  CUtensorMap ta, tb, tc;
  struct Map {
    CUtensorMap* out;
    const void* base;
    Tma2D params;
    const char* name;
  };
  const Map maps[] = {{&ta, args.a, tma_operand_a(args, kBlockM, kBlockK), "A"},
                      {&tb, args.b, tma_operand_b(args, config.block_n, kBlockK), "B"},
                      {&tc, args.c, tma_output_c(args, kEpiPanel), "C"}};
  for (const auto& m : maps) {
    const CUresult r = encode_tma_2d(m.out, args.dtype, m.base, m.params);
    if (r != CUDA_SUCCESS)
      return std::string("cuTensorMapEncodeTiled failed for ") + m.name + " (CUresult " + std::to_string(r) + ")";
  }
  if (config.block_n == 256) {
    static_assert(smem_bytes(256, 4) <= kSmemLimit);
    return launch_layout<Element, 256, 4>(ta, tb, tc, args, config);
  }
  static_assert(smem_bytes(128, 6) <= kSmemLimit);
  return launch_layout<Element, 128, 6>(ta, tb, tc, args, config);
}

}  // namespace tcgemm::sm90
