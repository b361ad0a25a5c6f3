// Dispatch: turns validated arguments into a Plan (which backend, which
// kernel, why) and executes it. Host code only.
//
// Who answers what: common/host/validate.hpp whether the arguments are
// well-formed; each family (sm90/sm90_gemm.hpp, sm100/sm100_gemm.hpp) whether
// its kernel can take a call (can_implement), whether it can honour the
// options (check_options) and which configuration runs (select_config); this
// file only puts those answers in order.
#pragma once

#include <string>
#include <variant>

#include "common/host/device.hpp"
#include "sm100/sm100_config.hpp"
#include "sm90/sm90_config.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// A plan and what executing it needs, decided once per call: for
// Path::kernel, the configuration of the family that runs it.
struct Decision {
  Plan plan;
  std::variant<std::monostate, sm90::Config, sm100::Config> config;
};

// Empty when every operand the call touches (C, and A and B when K > 0) is
// device memory and args.stream runs on `device`; otherwise why not, ending
// with describe(args). Checked before anything is launched, so that a
// rejected call writes nothing.
std::string check_operands(const GemmArgs& args, int device);

// Empty when the options are values the API knows and force no
// configuration that no family builds (sm90::check_config_options,
// sm100::check_options), whatever the device; otherwise why not. The
// device's family checks the rest (decide).
std::string check_options(const Options& options, bool grouped = false);

// The admission every entry point applies (gemm, plan, reference_gemm):
// check_args, check_options, then, unless M or N is 0, a current device that
// this build has code for, and operands on it (check_operands).
struct Admission {
  Status status = Status::ok;
  std::string reason;                  // why not, when status is not ok (without the "tcgemm: " prefix)
  const DeviceInfo* device = nullptr;  // the device to run on; null when rejected or when M or N is 0
};
Admission admit(const GemmArgs& args, const Options& options);

// What runs an admitted call with M, N > 0 on `device`: the K == 0 scale,
// cuBLAS when asked for, the device family's kernel in the configuration it
// selects, or the cuBLAS fallback; or a rejection, for options the family
// cannot honour or a fallback under Prefer::tcgemm_only. Pure host code.
Decision decide(const GemmArgs& args, const Options& options, const DeviceInfo& device);

// admit, then decide.
Decision make_plan(const GemmArgs& args, const Options& options);
// Runs a decision made by make_plan for the same arguments; returns its plan
// with the status and reason of the execution.
Plan execute(const GemmArgs& args, Decision decision);

}  // namespace tcgemm::detail
