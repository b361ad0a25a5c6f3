// The f16 instantiations of sm100_gemm (4 layouts x kSm100TileConfigs).
#include "sm100/sm100_gemm_launch.cuh"

namespace tcgemm::sm100 {
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return run_typed<__half>(args, config, grid_ctas);
}
}  // namespace tcgemm::sm100
