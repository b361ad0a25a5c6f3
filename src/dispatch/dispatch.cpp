#include "dispatch/dispatch.hpp"

#include "common/host/device.hpp"
#include "common/host/validate.hpp"
#include "dispatch/cublas_fallback.hpp"
#include "reference/reference.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm90/sm90_gemm.hpp"

namespace tcgemm::detail {

namespace {

Decision reject(Status status, std::string reason) {
  Decision d;
  d.plan.status = status;
  d.plan.reason = "tcgemm: " + std::move(reason);
  return d;
}

#if defined(TCGEMM_HAS_SM90)
constexpr bool kHasSm90 = true;
#else
constexpr bool kHasSm90 = false;
#endif
#if defined(TCGEMM_HAS_SM100)
constexpr bool kHasSm100 = true;
#else
constexpr bool kHasSm100 = false;
#endif

// Options that only one family understands, checked once the device (and so
// the family) is known. Empty when they fit.
std::string sm90_option_error(const Options& o) {
  if (o.schedule == Schedule::cluster_launch_control)
    return "Options::schedule = cluster_launch_control needs an sm_100 GPU (Cluster Launch Control is Blackwell's)";
  return {};
}
std::string sm100_option_error(const Options& o) {
  if (o.block_n != 0 && !sm100::is_tile_width(o.block_n))
    return "Options::block_n must be 0, 128 or 256 on sm_100, not " + std::to_string(o.block_n);
  if (o.cluster_m != 0 || o.pingpong)
    return "Options::cluster_m and pingpong select sm90 configurations; on sm_100 every tile spans a 2-CTA "
           "cluster (leave them 0/false)";
  return {};
}

std::string arch_name(const DeviceInfo& d) { return "sm_" + std::to_string(d.cc_major * 10 + d.cc_minor); }

}  // namespace

std::string check_operands(const GemmArgs& args, int device) {
  for (auto [name, ptr] : {std::pair<const char*, const void*>{"A", args.a}, {"B", args.b}, {"C", args.c}}) {
    if (args.k == 0 && name[0] != 'C') continue;
    if (std::string why = check_device_pointer(name, ptr); !why.empty()) return why + " (" + describe(args) + ")";
  }
  if (std::string why = check_stream(args.stream, device); !why.empty()) return why + " (" + describe(args) + ")";
  return {};
}

Decision make_plan(const GemmArgs& args, const Options& options) {
  if (std::string why = check_args(args); !why.empty()) return reject(Status::invalid_argument, why);
  const int prefer = static_cast<int>(options.prefer);
  if (prefer < 0 || prefer > 2)
    return reject(Status::invalid_argument, "unknown Options::prefer " + std::to_string(prefer));
  if (options.block_n != 0 && !sm90::is_tile_width(options.block_n))
    return reject(Status::invalid_argument, "Options::block_n must be 0 (automatic) or one of 64, 128, 192, 256, not " +
                                                std::to_string(options.block_n));
  const int schedule = static_cast<int>(options.schedule);
  if (schedule < 0 || schedule > 2)
    return reject(Status::invalid_argument, "unknown Options::schedule " + std::to_string(schedule));
  if ((options.cluster_m != 0 || options.pingpong) &&
      !sm90::is_tile_config(options.block_n, options.cluster_m, options.pingpong))
    return reject(Status::invalid_argument, "Options block_n=" + std::to_string(options.block_n) +
                                                " cluster_m=" + std::to_string(options.cluster_m) +
                                                " pingpong=" + (options.pingpong ? "true" : "false") +
                                                " is not a built-in configuration (kTileConfigs)");

  Decision decision;
  Plan& plan = decision.plan;
  if (args.m == 0 || args.n == 0) {
    plan.backend = Backend::none;
    plan.kernel = "none";
    plan.reason = "M or N is 0: nothing to compute, C is untouched";
    return decision;
  }

  std::string error;
  const DeviceInfo* dev = current_device(&error);
  if (dev == nullptr) return reject(Status::no_device, error);
  if (dev->image != cudaSuccess)
    return reject(Status::unsupported, "this build of tcgemm holds code for " + std::string(TCGEMM_ARCHS) +
                                           " only; device " + std::to_string(dev->id) + " (" + dev->name + ") is " +
                                           arch_name(*dev) + ": rebuild with -DTCGEMM_CUDA_ARCHS=<arch>");

  if (std::string why = check_operands(args, dev->id); !why.empty()) return reject(Status::invalid_argument, why);

  if (args.k == 0) {
    plan.backend = Backend::none;
    plan.kernel = "scale_c";
    plan.reason = args.beta == 0.0f ? "K is 0: C = 0 (beta is 0, C is not read)" : "K is 0: C = beta * C";
    return decision;
  }

  if (options.prefer == Prefer::cublas_only) {
    plan.backend = Backend::cublas;
    plan.kernel = "cublasGemmEx";
    plan.reason = "cuBLAS requested";
    return decision;
  }

  // The kernel family for the device: sm_90 (H100/H200) or sm_100 (B200/GB200).
  const bool is_sm90 = dev->cc_major == 9 && dev->cc_minor == 0;
  const bool is_sm100 = dev->cc_major == 10 && dev->cc_minor == 0;
  if (std::string why = is_sm100 ? sm100_option_error(options) : sm90_option_error(options); !why.empty())
    return reject(Status::invalid_argument, why);
  std::string why_not;
  if (is_sm90) {
    why_not = kHasSm90 ? sm90::can_implement(args) : "this build has no sm90 kernels (TCGEMM_CUDA_ARCHS lacks 90a)";
  } else if (is_sm100) {
    why_not = kHasSm100 ? sm100::can_implement(args)
                        : "this build has no sm100 kernels (TCGEMM_CUDA_ARCHS lacks 100a)";
  } else {
    why_not = "no tcgemm kernel for " + arch_name(*dev) + " (" + dev->name + ") yet";
  }
  if (why_not.empty() && is_sm90) {
    decision.config = sm90::select_config(args.m, args.n, args.k, dev->num_sms, options.block_n, options.cluster_m,
                                          options.pingpong);
    plan.backend = Backend::sm90;
    plan.kernel = sm90::kernel_name(args, decision.config);
    plan.reason = "sm_90 device, operands TMA-compatible";
    return decision;
  }
  if (why_not.empty() && is_sm100) {
    decision.config100 =
        sm100::select_config(args.m, args.n, args.k, dev->num_sms, options.block_n, options.schedule);
    plan.backend = Backend::sm100;
    plan.kernel = sm100::kernel_name(args, decision.config100);
    plan.reason = "sm_100 device, operands TMA-compatible";
    return decision;
  }
  if (options.prefer == Prefer::tcgemm_only)
    return reject(Status::unsupported, "no tcgemm kernel can take this call: " + why_not + " (" + describe(args) + ")");
  plan.backend = Backend::cublas;
  plan.kernel = "cublasGemmEx";
  plan.reason = "fallback: " + why_not;
  return decision;
}

Plan execute(const GemmArgs& args, Decision decision) {
  Plan& plan = decision.plan;
  if (plan.status != Status::ok) return plan;
  std::string error;
  switch (plan.backend) {
    case Backend::none:
      if (plan.kernel == "scale_c") {
        const cudaError_t err = launch_scale(args);
        if (err != cudaSuccess) error = std::string("scale kernel failed: ") + cudaGetErrorString(err);
      }
      break;
    case Backend::sm90:
      error = sm90::run(args, decision.config, &plan.grid_ctas);
      break;
    case Backend::sm100:
      error = sm100::run(args, decision.config100, &plan.grid_ctas);
      break;
    case Backend::cublas:
      error = cublas_gemm(args);
      break;
  }
  if (!error.empty()) {
    plan.status = Status::cuda_error;
    plan.reason = "tcgemm: " + plan.kernel + ": " + error + " (" + describe(args) + ")";
  }
  return plan;
}

}  // namespace tcgemm::detail
