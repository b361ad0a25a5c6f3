// The fp16 instantiations of sm90_gemm_persistent: the 7 128-row kTileConfigs x 4 layouts,
// the 64-row 64-, 128-, 256-wide x 4 and the 64-row 8-, 16-, 32-wide x 2 (B K-major): 46 kernels.
#include "sm90/sm90_gemm_launch.cuh"

namespace tcgemm::sm90 {
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return run_typed<__half>(args, config, grid_ctas);
}
}  // namespace tcgemm::sm90
