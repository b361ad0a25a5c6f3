// Dispatch: turns validated arguments into a Plan (which backend, which
// kernel, why) and executes it. Host code only.
#pragma once

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

Plan make_plan(const GemmArgs& args, const Options& options);
// Runs a plan made by make_plan for the same arguments; returns it with the
// status and reason of the execution.
Plan execute(const GemmArgs& args, const Options& options, Plan plan);

}  // namespace tcgemm::detail
