// launch_part's definition (sm90_gemm_launch.cuh): included by the part
// translation units alone (sm90_gemm_{f16,bf16}_part<P>.cu), each of which
// instantiates it for its dtype and part, so that a part's kernels compile in
// its unit only.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "sm90/sm90_gemm_launch.cuh"

namespace tcgemm::sm90 {

// kTileConfigs[I...] that are part Part's (I % kLaunchParts == Part): the one
// `config` names, launched; nothing if none. (`if constexpr`: the kernels of
// other parts' configurations are not instantiated here.)
template <typename Element, size_t Part, size_t... I>
std::optional<std::string> launch_part_of(const detail::GemmTensorMaps& maps, const GemmArgs& ops,
                                          const GemmArgs& call, const Config& config, int* grid_ctas,
                                          std::index_sequence<I...>) {
  std::optional<std::string> run;
  const auto names = [&config](const TileConfig& tc) {
    return config.block_n == tc.block_n && config.block_m == tc.block_m && config.cluster_m == tc.cluster_m &&
           config.cluster_n == tc.cluster_n && config.pingpong == tc.pingpong && config.swap_ab == tc.swap_ab;
  };
  const auto try_config = [&](auto index) {
    constexpr size_t i = decltype(index)::value;
    if constexpr (i % kLaunchParts == Part) {
      constexpr TileConfig tc = kTileConfigs[i];
      if (run || !names(tc)) return;
      if constexpr (tc.swap_ab)
        run = launch_swapped<Element, tc.block_n, tc.block_m>(maps, ops, config, grid_ctas, call);
      else
        run = launch_layout<Element, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m, tc.cluster_n>(
            maps, call, config, grid_ctas);
    }
  };
  (try_config(std::integral_constant<size_t, I>{}), ...);
  return run;
}

template <typename Element, size_t Part>
std::optional<std::string> launch_part(const detail::GemmTensorMaps& maps, const GemmArgs& ops, const GemmArgs& call,
                                       const Config& config, int* grid_ctas) {
  static_assert(Part < kLaunchParts);
  return launch_part_of<Element, Part>(maps, ops, call, config, grid_ctas,
                                       std::make_index_sequence<std::size(kTileConfigs)>{});
}

}  // namespace tcgemm::sm90
