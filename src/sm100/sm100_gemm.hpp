// Host interface of the sm100 kernel family: can it take a call, what is it
// called, and launch it. Validation of the arguments themselves
// (common/host/validate.hpp) has already happened.
#pragma once

#include <string>

#include "sm100/sm100_config.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::sm100 {

// Empty when the sm100 kernel can run this call; otherwise why not (TMA needs
// 16-byte aligned bases and leading dimensions that are multiples of 8).
std::string can_implement(const GemmArgs& args);

// Empty when the sm100 kernel can honour `options`: block_n 0 or a width of
// kSm100TileConfigs, cluster_m 0, 1 (single-CTA tiles, persistent only) or 2
// (pair tiles) and block_m 0, 256 (pairs), 128 or 64 (single-CTA tiles)
// naming a built configuration, pingpong and cluster_n left alone (sm90's);
// otherwise why not.
std::string check_options(const Options& options);

// Empty when an M-grouped call (GemmArgs::groups) can honour `options`:
// single-CTA tiles (cluster_m 0 or 1), persistent, a block_n of
// kSm100GroupedWidths if any; otherwise why not.
std::string check_grouped_options(const GemmArgs& args, const Options& options);

// Empty when the configuration `options` force is built for the call's
// layout (single-CTA tiles 8, 16, 32, 40, 48 and 96 wide: B K-major only); otherwise why not.
std::string check_layout(const GemmArgs& args, const Options& options);

// "sm100_gemm<f16,NT,256x256x64, 6 stages, cluster launch control>": the name
// of the kernel that runs `config` (Plan::kernel).
std::string kernel_name(const GemmArgs& args, const KernelConfig& config);

// Encodes the tensor maps and launches on args.stream. Empty on success,
// otherwise the reason. *grid_ctas gets the grid's size in CTAs.
std::string run(const GemmArgs& args, const Config& config, int* grid_ctas);

// Per-dtype entry points, one translation unit each (sm100_gemm_f16.cu, ...).
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas);
std::string run_bf16(const GemmArgs& args, const Config& config, int* grid_ctas);

}  // namespace tcgemm::sm100
