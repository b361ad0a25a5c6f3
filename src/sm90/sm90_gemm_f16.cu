// The fp16 instantiations of sm90_gemm_persistent: every kTileConfigs entry x the layouts it is
// built for (builds_for_b), each with the plain and the fused epilogue (sm90_gemm_launch.cuh).
#include "sm90/sm90_gemm_launch.cuh"

namespace tcgemm::sm90 {
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return run_typed<__half>(args, config, grid_ctas);
}
}  // namespace tcgemm::sm90
