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

// "sm90_gemm_persistent<f16,NT,128x256x64,4 stages>"
std::string kernel_name(const GemmArgs& args, const Config& config);

// Encodes the tensor maps and launches on args.stream. Empty on success,
// otherwise the reason (a CUDA or driver error, with its name). *grid_ctas
// gets the persistent grid's size: config.num_ctas capped at the clusters
// that can be resident at once.
std::string run(const GemmArgs& args, const Config& config, int* grid_ctas);

// Per-dtype entry points, one translation unit each (sm90_gemm_f16.cu, ...).
std::string run_f16(const GemmArgs& args, const Config& config, int* grid_ctas);
std::string run_bf16(const GemmArgs& args, const Config& config, int* grid_ctas);

}  // namespace tcgemm::sm90
