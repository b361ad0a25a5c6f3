// Dispatch: turns validated arguments into a Plan (which backend, which
// kernel, why) and executes it. Host code only.
#pragma once

#include <string>

#include "sm100/sm100_config.hpp"
#include "sm90/sm90_config.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// A plan and what executing it needs, decided once per call.
struct Decision {
  Plan plan;
  sm90::Config config{};     // when plan.backend == Backend::sm90
  sm100::Config config100{};  // when plan.backend == Backend::sm100
};

// Empty when every operand the call touches (C, and A and B when K > 0) is
// device memory and args.stream runs on `device`; otherwise why not, ending
// with describe(args). Checked before anything is launched, so that a
// rejected call writes nothing (make_plan and reference_gemm both ask).
std::string check_operands(const GemmArgs& args, int device);

Decision make_plan(const GemmArgs& args, const Options& options);
// Runs a decision made by make_plan for the same arguments; returns its plan
// with the status and reason of the execution.
Plan execute(const GemmArgs& args, Decision decision);

}  // namespace tcgemm::detail
