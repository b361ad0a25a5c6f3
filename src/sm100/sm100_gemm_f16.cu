// The f16 entry point: the tensor maps and the M-grouped kernels here, the
// kernels of kSm100TileConfigs in sm100_gemm_f16_part{0..3}.cu (sm100_gemm_launch.cuh).
#include "sm100/sm100_gemm_launch.cuh"

namespace tcgemm::sm100 {
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return run_typed<__half>(args, config, grid_ctas);
}
}  // namespace tcgemm::sm100
