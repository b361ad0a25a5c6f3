#include "dispatch/dispatch.hpp"

#include "common/host/validate.hpp"
#include "common/output_policy.hpp"
#include "dispatch/cublas_fallback.hpp"
#include "reference/reference.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm90/sm90_gemm.hpp"

namespace tcgemm::detail {

namespace {

Decision reject(Status status, const std::string& reason) {
  Decision d;
  d.plan.status = status;
  d.plan.reason = "tcgemm: " + reason;
  return d;
}

// A call that runs no kernel of a family: nothing, the scale, or cuBLAS.
Decision run_without_kernel(Path path, Backend backend, const char* kernel, std::string reason) {
  Decision d;
  d.plan.path = path;
  d.plan.backend = backend;
  d.plan.kernel = kernel;
  d.plan.reason = std::move(reason);
  return d;
}

// A call that a family's kernel runs in `config`: the plan shows its public
// part (Plan::config) and the name made from it.
template <typename Config>
Decision run_kernel(Backend family, const Config& config, std::string kernel, const char* reason) {
  Decision d;
  d.plan.path = Path::kernel;
  d.plan.backend = family;
  d.plan.kernel = std::move(kernel);
  d.plan.reason = reason;
  d.plan.config = config;
  d.config = config;
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

std::string arch_name(const DeviceInfo& d) { return "sm_" + std::to_string(d.cc_major * 10 + d.cc_minor); }

}  // namespace

std::string check_operands(const GemmArgs& args, int device) {
  for (auto [name, ptr] : {std::pair<const char*, const void*>{"A", args.a}, {"B", args.b}, {"C", args.c},
                           {"bias", args.bias}, {"group_ends", args.group_ends}}) {
    if (!reads_a_and_b(args) && (name[0] == 'A' || name[0] == 'B')) continue;
    if (name[0] == 'b' && ptr == nullptr) continue;  // no bias
    if (name[0] == 'g' && !args.grouped()) continue;  // not M-grouped
    if (std::string why = check_device_pointer(name, ptr, device); !why.empty())
      return why + " (" + describe(args) + ")";
  }
  if (std::string why = check_stream(args.stream, device); !why.empty()) return why + " (" + describe(args) + ")";
  return {};
}

std::string check_options(const Options& options, bool grouped) {
  const int prefer = static_cast<int>(options.prefer);
  if (prefer < 0 || prefer > 2) return "unknown Options::prefer " + std::to_string(prefer);
  const int schedule = static_cast<int>(options.schedule);
  if (schedule < 0 || schedule > 3) return "unknown Options::schedule " + std::to_string(schedule);
  if (options.sm_count < 0)
    return "Options::sm_count must be 0 (every SM) or a number of SMs, not " + std::to_string(options.sm_count);
  if (options.sm_count > 0 && options.schedule == Schedule::cluster_launch_control)
    return "Options::sm_count bounds a persistent grid, and Cluster Launch Control launches a CTA a tile: "
           "leave Options::schedule automatic or persistent with it";
  // A configuration some family builds; the device's family checks the rest
  // (decide). Neither: both reasons, for the user may mean either device.
  // (An M-grouped call's: the family's check_grouped_options, in decide.)
  if (grouped) return {};
  std::string sm90_why = sm90::check_config_options(options);
  if (sm90_why.empty()) return {};
  std::string sm100_why = sm100::check_options(options);
  if (sm100_why.empty()) return {};
  return "no kernel family builds these Options: on sm_90, " + sm90_why + "; on sm_100, " + sm100_why;
}

Admission admit(const GemmArgs& args, const Options& options) {
  if (std::string why = check_args(args); !why.empty()) return {Status::invalid_argument, why};
  // (Every reason ends with the whole case, as check_args's do.)
  const auto with_case = [&](const std::string& why) { return why + " (" + describe(args) + ")"; };
  if (std::string why = check_options(options, args.grouped()); !why.empty())
    return {Status::invalid_argument, with_case(why)};
  if (args.m == 0 || args.n == 0 || args.batch == 0) return {};  // nothing to write
  std::string error;
  Status failure = Status::no_device;
  const DeviceInfo* dev = current_device(&error, &failure);
  if (dev == nullptr) return {failure, with_case(error)};
  // (The generic code carries PTX of sm_80, which the driver compiles for
  // any newer GPU: this fails on an older one, or a driver too old for it.)
  if (dev->image != cudaSuccess)
    return {Status::unsupported,
            with_case("tcgemm's code (" + std::string(TCGEMM_ARCHS) + " kernels, the rest for sm_80 and newer) " +
                      "cannot run on device " + std::to_string(dev->id) + " (" + dev->name + ", " +
                      arch_name(*dev) + "): " + cudaGetErrorString(dev->image))};
  if (std::string why = check_operands(args, dev->id); !why.empty()) return {Status::invalid_argument, why};
  return {Status::ok, {}, dev};
}

Decision decide(const GemmArgs& args, const Options& options, const DeviceInfo& dev) {
  // A fused epilogue (bias, activation) is tcgemm's kernels' alone: no cuBLAS
  // call computes it with one rounding.
  const bool fused = args.fused_epilogue();
#if defined(TCGEMM_NO_FUSED_EPILOGUE)
  if (fused)
    return reject(Status::unsupported,
                  "this build of tcgemm has no fused epilogue (bias, activation): it was built with "
                  "TCGEMM_NO_FUSED_EPILOGUE");
#endif
  if (!reads_a_and_b(args)) {
    // K or alpha is 0: no product to compute, A and B are not read (as in
    // BLAS). The fused epilogue's act(alpha * 0 + bias) takes the place of 0.
    const std::string zero = fused ? "act(bias)" : "0";
    const std::string why = args.k == 0 ? "K is 0: C = " : "alpha is 0: C = ";
    const std::string unread = args.k == 0 ? "" : ", A and B are not read";
    return run_without_kernel(Path::scale, Backend::none, "scale_c",
                              args.beta == 0.0f ? why + zero + " (beta is 0, C is not read" + unread + ")"
                                                : why + (fused ? zero + " + " : std::string()) + "beta * C" +
                                                      (unread.empty() ? "" : " (" + unread.substr(2) + ")"));
  }
  if (options.prefer == Prefer::cublas_only) {
    if (args.grouped())
      return reject(Status::unsupported,
                    "cuBLAS was requested, but an M-grouped call runs on tcgemm's kernels only (" + describe(args) + ")");
    if (fused)
      return reject(Status::unsupported, "cuBLAS was requested, but it has no fused bias/activation epilogue (" +
                                             describe(args) + ")");
    return run_without_kernel(Path::cublas, Backend::cublas, cublas_kernel_name(args), "cuBLAS requested");
  }

  // The kernel family for the device: sm_90 (H100/H200) or sm_100 (B200/GB200).
  const bool is_sm90 = dev.cc_major == 9 && dev.cc_minor == 0;
  const bool is_sm100 = dev.cc_major == 10 && dev.cc_minor == 0;
  // The options it can honour; a device without a family is held to sm90's
  // (Cluster Launch Control is refused everywhere but on sm_100).
  if (std::string why = is_sm100 ? sm100::check_options(options) : sm90::check_options(options, args.grouped());
      !why.empty())
    return reject(Status::invalid_argument, why + " (" + describe(args) + ")");
  // The SMs the kernel is chosen and launched for (Options::sm_count).
  const int sms = options.sm_count > 0 && options.sm_count < dev.num_sms ? options.sm_count : dev.num_sms;
  // A cluster's CTAs run at once on as many SMs: one larger than the SMs
  // allowed (a cluster or a pair tile forced) cannot keep to them.
  const auto cluster_exceeds_sms = [&](int cluster_ctas) {
    return cluster_ctas > sms ? "Options::sm_count = " + std::to_string(sms) + " is fewer SMs than the " +
                                    std::to_string(cluster_ctas) + " CTAs of the cluster the options ask for (" +
                                    describe(args) + ")"
                              : std::string();
  };
  std::string why_not;
  if (is_sm90) {
    why_not = kHasSm90 ? sm90::can_implement(args) : "this build has no sm90 kernels (TCGEMM_CUDA_ARCHS lacks 90a)";
  } else if (is_sm100) {
    why_not = kHasSm100 ? sm100::can_implement(args)
                        : "this build has no sm100 kernels (TCGEMM_CUDA_ARCHS lacks 100a)";
  } else {
    why_not = "no tcgemm kernel for " + arch_name(dev) + " (" + dev.name + ") yet";
  }
  if (why_not.empty() && is_sm100 && args.grouped()) {
    if (std::string why = sm100::check_grouped_options(args, options); !why.empty())
      return reject(Status::invalid_argument, why + " (" + describe(args) + ")");
    sm100::Config config =
        sm100::select_grouped_config(args.m, args.n, args.k, args.groups, sms, options.block_n);
    config.pdl = options.pdl;
    return run_kernel(Backend::sm100, config, sm100::kernel_name(args, config),
                      "sm_100 device, operands TMA-compatible, M-grouped");
  }
  if (why_not.empty() && is_sm90 && args.grouped()) {
    if (std::string why = sm90::check_grouped_options(args, options); !why.empty())
      return reject(Status::invalid_argument, why + " (" + describe(args) + ")");
    sm90::Config config = sm90::select_grouped_config(args.m, args.n, args.k, args.groups, sms,
                                                      options.block_n, options.block_m, options.pingpong);
    config.pdl = options.pdl;
    return run_kernel(Backend::sm90, config, sm90::kernel_name(args, config),
                      "sm_90 device, operands TMA-compatible, M-grouped");
  }
  // C larger than L2 at a short K: stored evict-first (common/output_policy.hpp; fp16 and bf16 C).
  const bool c_evict_first = c_stores_evict_first(args.m, args.n, args.k, args.batch, 2, dev.l2_bytes);
  if (why_not.empty() && is_sm90) {
    if (std::string why = sm90::check_layout(args, options); !why.empty())
      return reject(Status::invalid_argument, why + " (" + describe(args) + ")");
    sm90::Config config = sm90::select_config(
        args.m, args.n, args.k, sms,
        sm90::ConfigRequest{options.block_n, options.cluster_m, options.pingpong, options.block_m, args.op_b == Op::T,
                            args.batch, args.op_a == Op::N, args.fused_epilogue(), options.cluster_n,
                            options.swap_ab, options.schedule, dev.l2_bytes});
    if (std::string why = cluster_exceeds_sms(config.cluster_m * config.cluster_n); !why.empty())
      return reject(Status::invalid_argument, why);
    config.pdl = options.pdl;
    config.c_evict_first = c_evict_first;
    config.l2_bytes = dev.l2_bytes;
    config.device = dev.id;
    return run_kernel(Backend::sm90, config, sm90::kernel_name(args, config), "sm_90 device, operands TMA-compatible");
  }
  if (why_not.empty() && is_sm100) {
    if (std::string why = sm100::check_layout(args, options); !why.empty())
      return reject(Status::invalid_argument, why + " (" + describe(args) + ")");
    sm100::Config config =
        sm100::select_config(args.m, args.n, args.k, sms, options.block_n,
                             options.sm_count > 0 ? Schedule::persistent : options.schedule,
                             options.cluster_m, args.op_b == Op::T, args.batch, options.block_m, options.swap_ab);
    if (std::string why = cluster_exceeds_sms(config.cta_group()); !why.empty())
      return reject(Status::invalid_argument, why);
    config.pdl = options.pdl;
    config.c_evict_first = c_evict_first;
    config.l2_bytes = dev.l2_bytes;
    return run_kernel(Backend::sm100, config, sm100::kernel_name(args, config),
                      "sm_100 device, operands TMA-compatible");
  }
  if (options.prefer == Prefer::tcgemm_only || fused || args.grouped())
    return reject(Status::unsupported,
                  "no tcgemm kernel can take this call" +
                      std::string(fused ? " (and cuBLAS cannot fuse its bias/activation)"
                                  : args.grouped() ? " (and no cuBLAS call computes an M-grouped GEMM)"
                                                   : "") +
                      ": " + why_not + " (" + describe(args) + ")");
  return run_without_kernel(Path::cublas, Backend::cublas, cublas_kernel_name(args), "fallback: " + why_not);
}

Decision make_plan(const GemmArgs& args, const Options& options) {
  const Admission admitted = admit(args, options);
  if (admitted.status != Status::ok) return reject(admitted.status, admitted.reason);
  if (admitted.device == nullptr)
    return run_without_kernel(Path::none, Backend::none, "none",
                              args.batch == 0 ? "the batch is empty: nothing to compute, C is untouched"
                                              : "M or N is 0: nothing to compute, C is untouched");
  return decide(args, options, *admitted.device);
}

Plan execute(const GemmArgs& args, Decision decision) {
  Plan& plan = decision.plan;
  if (plan.status != Status::ok) return plan;
  std::string error;
  switch (plan.path) {
    case Path::none:
      break;
    case Path::scale:
      if (const cudaError_t err = launch_scale(args); err != cudaSuccess)
        error = std::string("scale kernel failed: ") + cudaGetErrorString(err);
      break;
    case Path::kernel:
      if (const auto* config = std::get_if<sm90::Config>(&decision.config))
        error = sm90::run(args, *config, &plan.grid_ctas);
      else if (const auto* config100 = std::get_if<sm100::Config>(&decision.config))
        error = sm100::run(args, *config100, &plan.grid_ctas);
      break;
    case Path::cublas:
      error = cublas_gemm(args);
      break;
  }
  if (!error.empty()) {
    // Reported in the Plan, so cleared from the runtime's record: else the
    // caller's next launch check (torch's, after a fallback to torch.mm)
    // would report it again against another operation. (A sticky error, a
    // fault, stays: no call clears it.)
    cudaGetLastError();
    plan.status = Status::cuda_error;
    plan.reason = "tcgemm: " + plan.kernel + ": " + error + " (" + describe(args) + ")";
  }
  return plan;
}

}  // namespace tcgemm::detail
