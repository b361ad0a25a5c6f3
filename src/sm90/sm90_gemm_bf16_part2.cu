// Part 2 of the bf16 kernels of kTileConfigs (sm90_gemm_part.cuh).
#include "sm90/sm90_gemm_part.cuh"

namespace tcgemm::sm90 {
template std::optional<std::string> launch_part<__nv_bfloat16, 2>(const detail::GemmTensorMaps&, const GemmArgs&,
                                                        const GemmArgs&, const Config&, int*);
}  // namespace tcgemm::sm90
