#include "common/host/tensor_map.hpp"
#include "sm100/sm100_gemm.hpp"

namespace tcgemm::sm100 {

std::string can_implement(const GemmArgs& args) {
  using namespace tcgemm::detail;
  if (!tile_count_fits_int32(args.m, args.n, kMmaM, 128))
    return "M x N has more output tiles than 32-bit tile indices reach";
  return gemm_maps_unsupported_reason(args, tma_operand_a(args, kBlockM, kBlockK),
                                      tma_operand_b(args, 256, kBlockK, kCtaGroup),
                                      tma_output_c(args, kEpiPanelCols, kEpiPanelRows));
}

std::string kernel_name(const GemmArgs& args, const Config& config) {
  return std::string("sm100_gemm<") + to_string(args.dtype) + "," + to_string(args.op_a) + to_string(args.op_b) +
         "," + describe(config) + ">";
}

std::string run(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return args.dtype == DType::f16 ? run_f16(args, config, grid_ctas) : run_bf16(args, config, grid_ctas);
}

}  // namespace tcgemm::sm100
