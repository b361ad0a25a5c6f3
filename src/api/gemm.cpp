// The public C++ API: validation -> dispatch -> kernel family.
#include <exception>

#include "common/host/validate.hpp"
#include "dispatch/dispatch.hpp"
#include "reference/reference.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm {
inline namespace TCGEMM_ABI_NAMESPACE {

namespace {
// Nothing may throw across the API; std::string allocation is the only thing
// that can, and then the caller gets a fixed message (or, where even that
// cannot be allocated, the status alone).
Plan out_of_memory() noexcept {
  Plan p;
  p.status = Status::cuda_error;
  try {
    p.reason = "tcgemm: host allocation failed";
  } catch (...) {
  }
  return p;
}
}  // namespace

Plan plan(const GemmArgs& args, const Options& options) noexcept {
  try {
    return detail::make_plan(args, options).plan;
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

Plan gemm(const GemmArgs& args, const Options& options) noexcept {
  try {
    return detail::execute(args, detail::make_plan(args, options));
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

Plan reference_gemm(const GemmArgs& args) noexcept {
  try {
    Plan p;
    p.kernel = "reference_gemm";
    const detail::Admission admitted = detail::admit(args, Options{});
    if (admitted.status != Status::ok) {
      p.status = admitted.status;
      p.reason = "tcgemm: " + admitted.reason;
      return p;
    }
    if (admitted.device == nullptr) return p;
    const cudaError_t err =
        detail::reads_a_and_b(args) ? detail::launch_reference_gemm(args) : detail::launch_scale(args);
    if (err != cudaSuccess) {
      cudaGetLastError();  // reported here (as execute() does)
      p.status = Status::cuda_error;
      p.reason = std::string("tcgemm: reference_gemm failed: ") + cudaGetErrorString(err);
    }
    return p;
  } catch (const std::exception&) {
    return out_of_memory();
  }
}

const char* to_string(DType d) noexcept {
  switch (d) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "unknown-dtype";
}

const char* to_string(Op op) noexcept {
  switch (op) {
    case Op::N: return "N";
    case Op::T: return "T";
  }
  return "?";
}

const char* to_string(Status s) noexcept {
  switch (s) {
    case Status::ok: return "ok";
    case Status::invalid_argument: return "invalid_argument";
    case Status::unsupported: return "unsupported";
    case Status::no_device: return "no_device";
    case Status::cuda_error: return "cuda_error";
  }
  return "unknown-status";
}

const char* to_string(Backend b) noexcept {
  switch (b) {
    case Backend::none: return "none";
    case Backend::sm90: return "sm90";
    case Backend::cublas: return "cublas";
    case Backend::sm100: return "sm100";
  }
  return "unknown-backend";
}

const char* to_string(Path path) noexcept {
  switch (path) {
    case Path::none: return "none";
    case Path::scale: return "scale";
    case Path::kernel: return "kernel";
    case Path::cublas: return "cublas";
  }
  return "unknown-path";
}

const char* to_string(Activation activation) noexcept {
  switch (activation) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::gelu: return "gelu";
    case Activation::gelu_tanh: return "gelu_tanh";
    case Activation::silu: return "silu";
  }
  return "unknown-activation";
}

const char* to_string(Schedule schedule) noexcept {
  switch (schedule) {
    case Schedule::automatic: return "automatic";
    case Schedule::persistent: return "persistent";
    case Schedule::cluster_launch_control: return "cluster_launch_control";
    case Schedule::counted: return "counted";
  }
  return "unknown-schedule";
}

BuildInfo build_info() noexcept {
  BuildInfo info{};
  info.version = TCGEMM_VERSION;
  info.cuda_archs = TCGEMM_ARCHS;
  info.kernel_families =
#if defined(TCGEMM_HAS_SM90)
      "sm90_gemm_persistent (wgmma + TMA, warp-specialized, persistent; runs on sm_90); "
#endif
#if defined(TCGEMM_HAS_SM100)
      "sm100_gemm (tcgen05 + tensor memory + TMA, 2-SM clusters, Cluster Launch Control; runs on sm_100); "
#endif
      "cuBLAS fallback";
  info.cuda_runtime_version = CUDART_VERSION;
  return info;
}

}  // inline namespace TCGEMM_ABI_NAMESPACE
}  // namespace tcgemm
