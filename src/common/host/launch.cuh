// Launch configuration shared by the kernel families: clusters through a
// launch attribute, and how many clusters of a kernel fit on the device.
#pragma once

#include <array>
#include <cstdlib>
#include <string>

#include <type_traits>

#include <cuda_runtime.h>

#include "common/host/device.hpp"
#include "common/host/once_on_success.hpp"
#include "common/smem_layout.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// The launch attributes of one launch; must outlive its configuration.
using LaunchAttributes = std::array<cudaLaunchAttribute, 2>;

// A launch of `ctas` CTAs of `threads` threads in clusters of `cluster_m`
// along x; `pdl`: as a programmatic dependent launch (Options::pdl; the
// kernel must call cudaGridDependencySynchronize before it touches memory
// the previous kernel may write or read).
inline cudaLaunchConfig_t launch_config(int ctas, int threads, int cluster_m, int smem, cudaStream_t stream,
                                        LaunchAttributes& attrs, bool pdl = false) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(ctas);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attrs.data();
  cfg.numAttrs = 0;
  if (cluster_m > 1) {
    cudaLaunchAttribute& a = attrs[cfg.numAttrs++];
    a.id = cudaLaunchAttributeClusterDimension;
    a.val.clusterDim.x = cluster_m;
    a.val.clusterDim.y = 1;
    a.val.clusterDim.z = 1;
  }
  if (pdl) {
    cudaLaunchAttribute& a = attrs[cfg.numAttrs++];
    a.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    a.val.programmaticStreamSerializationAllowed = 1;
  }
  return cfg;
}

// How many clusters of `cluster_m` CTAs of this kernel can be resident at
// once on the current device: the persistent grid. Not num_sms / cluster_m:
// clusters must fit inside a GPC, and the GPCs' SM counts differ.
template <typename Kernel>
int max_resident_clusters(Kernel kernel, int threads, int cluster_m, int smem, int num_sms, cudaError_t* err) {
  if (cluster_m == 1) return num_sms;
  LaunchAttributes attrs{};
  const cudaLaunchConfig_t cfg =
      launch_config(cluster_m * (num_sms / cluster_m), threads, cluster_m, smem, nullptr, attrs);
  int clusters = 0;
  *err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg);
  return clusters;
}

// Calls f(a_major, b_major) with the operands' shared-memory majorness as
// std::integral_constant<Major, ...>, so a launcher can pick its kernel
// template: op_a = N means A is M x K (K contiguous, K-major); op_b = N
// means B is K x N (N contiguous, MN-major).
template <typename F>
decltype(auto) with_operand_majors(const GemmArgs& args, F&& f) {
  using K = std::integral_constant<Major, Major::K>;
  using MN = std::integral_constant<Major, Major::MN>;
  if (args.op_a == Op::N) return args.op_b == Op::N ? f(K{}, MN{}) : f(K{}, K{});
  return args.op_b == Op::N ? f(MN{}, MN{}) : f(MN{}, K{});
}

// Calls f(fused) with whether the call has a fused epilogue (a bias or an
// activation) as std::bool_constant, so a launcher picks the kernel built
// with or without it: a plain call runs kernels that hold no fused code
// (the activations inlined per element make a kernel several times larger,
// and that alone cost the plain kernels 1-2 us a launch when one kernel did
// both: docs/PERF.md, "Fused epilogue").
// A build with TCGEMM_NO_FUSED_EPILOGUE (the one-file leaderboard submission,
// compiled at run time) builds the plain kernels alone; dispatch refuses
// fused calls there before they reach a launcher.
template <typename F>
decltype(auto) with_epilogue_kind(const GemmArgs& args, F&& f) {
#if !defined(TCGEMM_NO_FUSED_EPILOGUE)
  if (args.fused_epilogue()) return f(std::true_type{});
#else
  (void)args;
#endif
  return f(std::false_type{});
}

// Debug builds: whether TCGEMM_DEBUG_BREAK_BARRIER asks the kernels to break
// a barrier on purpose (EpilogueParams::debug_break_barrier).
inline int debug_break_barrier_requested() {
#if defined(TCGEMM_DEBUG_HANGS)
  const char* v = std::getenv("TCGEMM_DEBUG_BREAK_BARRIER");
  return v != nullptr && v[0] != '\0' && v[0] != '0';
#else
  return 0;
#endif
}

// Once per kernel and device (the attributes are per device): opts KERNEL in
// to `smem` bytes of dynamic shared memory and counts how many clusters of
// `cluster` CTAs fit at once (*clusters). Empty on success, else why not. Only
// an answer is kept: a failure (the kernel's first load out of device memory,
// under lazy loading) is cleared and tried again on the next call.
template <auto KERNEL>
std::string setup_kernel_once(int threads, int cluster, int smem, int* clusters) {
  struct PerDevice {
    OnceOnSuccess filled;
    int clusters = 0;
  };
  static std::array<PerDevice, kMaxDevices> per_device;
  int device = 0;
  cudaGetDevice(&device);
  if (device < 0 || device >= kMaxDevices)
    return "device index " + std::to_string(device) + " is beyond the " + std::to_string(kMaxDevices) + " supported";
  PerDevice& d = per_device[device];
  cudaError_t err = cudaSuccess;
  const bool filled = d.filled.run([&] {
    err = cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    int sms = 0;
    if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    if (err == cudaSuccess) d.clusters = max_resident_clusters(KERNEL, threads, cluster, smem, sms, &err);
    return err == cudaSuccess;
  });
  if (!filled)
    return std::string("kernel setup (shared memory opt-in, cluster occupancy) failed: ") + cudaGetErrorString(err) +
           " (tried again on the next call)";
  if (d.clusters < 1) return "no cluster of " + std::to_string(cluster) + " CTAs of this kernel fits on the device";
  *clusters = d.clusters;
  return {};
}

}  // namespace tcgemm::detail
