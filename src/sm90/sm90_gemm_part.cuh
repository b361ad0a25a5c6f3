// launch_part's definition (sm90_gemm_launch.cuh): included by the part
// translation units alone (sm90_gemm_{f16,bf16}_part<P>.cu), each of which
// instantiates it for its dtype and part, so that a part's kernels compile in
// its unit only (common/host/kernel_parts.hpp).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "common/host/kernel_parts.hpp"
#include "sm90/sm90_gemm_launch.cuh"

namespace tcgemm::sm90 {

template <typename Element, size_t Part>
std::optional<std::string> launch_part(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const GemmArgs& call,
                                       const Config& config, int* grid_ctas) {
  const auto names = [&config](size_t i) {
    const TileConfig& tc = kTileConfigs[i];
    return config.block_n == tc.block_n && config.block_m == tc.block_m && config.cluster_m == tc.cluster_m &&
           config.cluster_n == tc.cluster_n && config.pingpong == tc.pingpong && config.swap_ab == tc.swap_ab;
  };
  const auto launch = [&](auto index) -> std::string {
    constexpr TileConfig tc = kTileConfigs[decltype(index)::value];
    if constexpr (tc.swap_ab)
      return launch_swapped<Element, tc.block_n, tc.block_m>(maps, ops, config, grid_ctas, call);
    else
      return launch_layout<Element, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m, tc.cluster_n>(maps, call,
                                                                                                     config, grid_ctas);
  };
  return detail::launch_in_part<Part>(names, launch, std::make_index_sequence<std::size(kTileConfigs)>{});
}

}  // namespace tcgemm::sm90
