// Part 0 of the f16 kernels of kSm100TileConfigs (sm100_gemm_part.cuh).
#include "sm100/sm100_gemm_part.cuh"

namespace tcgemm::sm100 {
template std::optional<std::string> launch_part<__half, 0>(const detail::GemmTensorMaps&, const GemmArgs&,
                                                         const GemmArgs&, const Config&, int*);
}  // namespace tcgemm::sm100
