// launch_part's definition (sm100_gemm_launch.cuh): included by the part
// translation units alone (sm100_gemm_{f16,bf16}_part<P>.cu), each of which
// instantiates it for its dtype and part, so that a part's kernels compile in
// its unit only (common/host/kernel_parts.hpp).
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <utility>

#include "common/host/kernel_parts.hpp"
#include "sm100/sm100_gemm_launch.cuh"

namespace tcgemm::sm100 {

template <typename Element, size_t Part>
std::optional<std::string> launch_part(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const GemmArgs& call,
                                       const Config& config, int* grid_ctas) {
  const auto names = [&config](size_t i) {
    const Sm100TileConfig& tc = kSm100TileConfigs[i];
    return config.block_n == tc.block_n && config.schedule == tc.schedule && config.cta_group() == tc.cta_group &&
           config.cta_rows() == tc.cta_rows && config.swap_ab == tc.swap_ab;
  };
  const auto launch = [&](auto index) -> std::string {
    constexpr Sm100TileConfig tc = kSm100TileConfigs[decltype(index)::value];
    if constexpr (tc.swap_ab)
      return launch_swapped<Element, tc.block_n>(maps, ops, config, grid_ctas, call);
    else
      return launch_layout<Element, tc.block_n, tc.schedule, tc.cta_group, tc.cta_rows>(maps, call, config, grid_ctas);
  };
  return detail::launch_in_part<Part>(names, launch, std::make_index_sequence<std::size(kSm100TileConfigs)>{});
}

}  // namespace tcgemm::sm100
