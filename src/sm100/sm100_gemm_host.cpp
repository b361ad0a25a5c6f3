#include <algorithm>
#include <vector>

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

std::string check_options(const Options& o) {
  if (o.block_n != 0 && !is_tile_width(o.block_n)) {
    // "0, 128 or 256": automatic, then the widths of kSm100TileConfigs, ascending.
    std::vector<int> widths{0};
    for (Sm100TileConfig c : kSm100TileConfigs)
      if (std::find(widths.begin(), widths.end(), c.block_n) == widths.end()) widths.push_back(c.block_n);
    std::sort(widths.begin(), widths.end());
    std::string list;
    for (size_t i = 0; i < widths.size(); ++i)
      list += (i == 0 ? "" : i + 1 == widths.size() ? " or " : ", ") + std::to_string(widths[i]);
    return "Options::block_n must be " + list + " on sm_100, not " + std::to_string(o.block_n);
  }
  if (o.cluster_m != 0 || o.pingpong || o.block_m != 0)
    return "Options::cluster_m, pingpong and block_m select sm90 configurations; on sm_100 every tile is 256 rows "
           "over a 2-CTA cluster (leave them 0/false)";
  return {};
}

std::string kernel_name(const GemmArgs& args, const KernelConfig& config) {
  return std::string("sm100_gemm<") + to_string(args.dtype) + "," + to_string(args.op_a) + to_string(args.op_b) +
         "," + describe(config) + ">";
}

std::string run(const GemmArgs& args, const Config& config, int* grid_ctas) {
  return args.dtype == DType::f16 ? run_f16(args, config, grid_ctas) : run_bf16(args, config, grid_ctas);
}

}  // namespace tcgemm::sm100
