// Host interface of the sm90 kernel family: can it take a call, what is it
// called, and launch it. Validation of the arguments themselves
// (common/host/validate.hpp) has already happened.
#pragma once

#include <string>

#include "sm90/sm90_config.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::sm90 {

// Empty when the sm90 kernel can run this call; otherwise why not (TMA needs
// 16-byte aligned bases and leading dimensions that are multiples of 8).
std::string can_implement(const GemmArgs& args);

// Empty when Options::block_n, cluster_m and pingpong force no configuration,
// or one of kTileConfigs (block_n alone: one of kTileWidths); otherwise why
// not. kTileWidths holds every width either family builds, so dispatch asks
// this on every device before it knows the family: a request that names no
// built configuration is refused alike everywhere.
std::string check_config_options(const Options& options);
// Empty when an M-grouped call (GemmArgs::groups) can honour `options`: no
// cluster, and a configuration override (block_n, block_m, pingpong) that
// names one of kGroupedTileConfigs, if any; otherwise why not.
std::string check_grouped_options(const GemmArgs& args, const Options& options);

// Empty when the sm90 kernel can honour `options`: check_config_options
// (not for an M-grouped call, whose configurations are kGroupedTileConfigs:
// check_grouped_options), and a schedule it has (persistent); otherwise why
// not.
std::string check_options(const Options& options, bool grouped = false);

// Empty when the configuration `options` force is built for the call's
// layout (widths 8 and 40: B K-major only; block_m 8: A and B K-major only;
// swap_ab: A K-major only); otherwise why not.
std::string check_layout(const GemmArgs& args, const Options& options);

// "sm90_gemm_persistent<f16,NT,128x256x64, 4 stages>": the name of the kernel
// that runs `config` (Plan::kernel).
std::string kernel_name(const GemmArgs& args, const KernelConfig& config);

// Encodes the tensor maps and launches on args.stream. Empty on success,
// otherwise the reason (a CUDA or driver error, with its name). *grid_ctas
// gets the persistent grid's size: config.num_ctas capped at the clusters
// that can be resident at once.
std::string run(const GemmArgs& args, const Config& config, int* grid_ctas);

// Per-dtype entry points, one translation unit each (sm90_gemm_f16.cu, ...).
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas);
std::string run_bf16(const GemmArgs& args, const Config& config, int* grid_ctas);

}  // namespace tcgemm::sm90
