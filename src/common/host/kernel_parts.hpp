// A family's kernels spread over several translation units a dtype, so that
// they compile in parallel: the family's table of configurations
// (kTileConfigs, kSm100TileConfigs) is cut into kKernelParts parts, entry I
// in part I % kKernelParts. Each part's kernels are instantiated by a unit of
// its own (smNN_gemm_<dtype>_part<P>.cu) through the family's launch_part,
// which the dtype's entry unit (smNN_gemm_<dtype>.cu: the tensor maps, the
// M-grouped kernels) only declares. The split changes no kernel's machine
// code (scripts/compare_sass.py), only which unit compiles it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace tcgemm::detail {

inline constexpr size_t kKernelParts = 4;

// Of the table's entries I..., part Part's: the first that `names(I)`
// accepts, launched by `launch(std::integral_constant<size_t, I>{})` (which
// returns the launch's error, empty on success); nothing if none. (`if
// constexpr`: the kernels of other parts' entries are not instantiated here.)
template <size_t Part, typename Names, typename Launch, size_t... I>
std::optional<std::string> launch_in_part(const Names& names, const Launch& launch, std::index_sequence<I...>) {
  static_assert(Part < kKernelParts);
  std::optional<std::string> run;
  const auto try_entry = [&](auto index) {
    if constexpr (decltype(index)::value % kKernelParts == Part) {
      if (!run && names(decltype(index)::value)) run = launch(index);
    }
  };
  (try_entry(std::integral_constant<size_t, I>{}), ...);
  return run;
}

// The first of `launch_part(std::integral_constant<size_t, P>{})`, P = 0, 1,
// ..., kKernelParts - 1, that runs a kernel (returns a value); nothing if none.
template <typename LaunchPart, size_t... P>
std::optional<std::string> launch_first_part(const LaunchPart& launch_part, std::index_sequence<P...>) {
  std::optional<std::string> run;
  ((run = launch_part(std::integral_constant<size_t, P>{})) || ...);
  return run;
}
template <typename LaunchPart>
std::optional<std::string> launch_first_part(const LaunchPart& launch_part) {
  return launch_first_part(launch_part, std::make_index_sequence<kKernelParts>{});
}

}  // namespace tcgemm::detail
