// The tensor-core ceiling measured in the same run as a benchmark: every SM
// runs 2 warpgroups issuing wgmma m64n256k16 back to back from operands that
// stay in shared memory. No loads, no epilogue: what a GEMM could reach if
// it did nothing else. See tcgemm/diagnostics.hpp.
#include <algorithm>
#include <vector>

#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "common/device/arch_guard.cuh"
#include "sm90/smem_desc.hpp"
#include "sm90/wgmma.cuh"
#include "tcgemm/diagnostics.hpp"

namespace tcgemm::sm90 {

namespace {

constexpr int kPeakThreads = 256;
constexpr int kPeakN = 256;
constexpr int kPeakSmem = 1024 + 2 * 64 * 128 + kPeakN * 128;  // align + A per warpgroup + B

template <typename Element>
__global__ void __launch_bounds__(kPeakThreads, 1) sm90_wgmma_peak(int iterations, float* sink) {
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw));
  uint8_t* smem = smem_raw + ((1024 - raw % 1024) % 1024);
  // Random-looking values in [-1, 1): the rate depends on the data (zeros run
  // faster), so never measure on zeros.
  Element* e = reinterpret_cast<Element*>(smem);
  for (int i = threadIdx.x; i < (kPeakSmem - 1024) / 2; i += blockDim.x) {
    const uint32_t h = (i + 1) * 2654435761u ^ (blockIdx.x * 40503u);
    const float v = static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    if constexpr (std::is_same_v<Element, __half>) e[i] = __float2half_rn(v);
    else e[i] = __float2bfloat16_rn(v);
  }
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  __syncthreads();
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  const uint32_t a = base + (threadIdx.x / 128) * 64 * 128;
  const uint32_t b = base + 2 * 64 * 128;
  float acc[kPeakN / 2];
#pragma unroll
  for (int i = 0; i < kPeakN / 2; ++i) acc[i] = 0.0f;
  for (int it = 0; it < iterations; ++it) {
    fence_accumulators(acc);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ++ks)
      wgmma_m64nNk16<Element, kPeakN, 0, 0>(acc, operand_desc(Major::K, a + 32 * ks, 64),
                                      operand_desc(Major::K, b + 32 * ks, 64), 1);
    wgmma_commit_group();
    wgmma_wait_group<1>();
    fence_accumulators(acc);
  }
  wgmma_wait_group<0>();
  fence_accumulators(acc);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPeakN / 2; ++i) s += acc[i];
  if (s == 1234.5f) sink[0] = s;  // keeps the loop alive; practically never true
#elif defined(__CUDA_ARCH__)
  static_assert(detail::kDependentFalse<Element>, "sm90_wgmma_peak is sm_90a code (common/device/arch_guard.cuh)");
#endif
}

// The events and the sink of one measurement, released on every return.
struct PeakResources {
  float* sink = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  PeakResources() = default;
  PeakResources(const PeakResources&) = delete;
  PeakResources& operator=(const PeakResources&) = delete;
  ~PeakResources() {
    if (stop != nullptr) cudaEventDestroy(stop);
    if (start != nullptr) cudaEventDestroy(start);
    if (sink != nullptr) cudaFree(sink);
  }
};

template <typename Element>
double measure(double milliseconds, std::string* why) {
  auto fail = [&](const char* what, cudaError_t err) {
    if (why != nullptr) *why = std::string(what) + ": " + cudaGetErrorString(err);
    cudaGetLastError();
    return -1.0;
  };
  int dev = 0, sms = 0, major = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return fail("cudaGetDevice", err);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (major != 9) {
    if (why != nullptr) *why = "the peak kernel needs an sm_90 device";
    return -1.0;
  }
  auto* kernel = &sm90_wgmma_peak<Element>;
  err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kPeakSmem);
  if (err != cudaSuccess) return fail("cudaFuncSetAttribute", err);
  PeakResources r;
  if ((err = cudaMalloc(&r.sink, sizeof(float))) != cudaSuccess) return fail("cudaMalloc", err);
  if ((err = cudaEventCreate(&r.start)) != cudaSuccess) return fail("cudaEventCreate", err);
  if ((err = cudaEventCreate(&r.stop)) != cudaSuccess) return fail("cudaEventCreate", err);
  // Per iteration: every SM, 2 warpgroups, 4 k16 steps of 2*64*256*16 FLOP.
  const double flops_per_iteration = static_cast<double>(sms) * 2 * 4 * (2.0 * 64 * kPeakN * 16);

  // Calibrate to ~10 ms per launch, then launch repeatedly for the requested
  // time and keep the second half: clocks settle under sustained load.
  int iterations = 2000;
  float ms = 0.0f;
  kernel<<<sms, kPeakThreads, kPeakSmem>>>(iterations, r.sink);
  cudaEventRecord(r.start);
  kernel<<<sms, kPeakThreads, kPeakSmem>>>(iterations, r.sink);
  cudaEventRecord(r.stop);
  if ((err = cudaEventSynchronize(r.stop)) != cudaSuccess) return fail("peak kernel", err);
  cudaEventElapsedTime(&ms, r.start, r.stop);
  iterations = std::max(1, static_cast<int>(iterations * 10.0 / std::max(ms, 1e-3f)));
  std::vector<double> rates;
  for (double spent = 0.0; spent < milliseconds || rates.size() < 4;) {
    cudaEventRecord(r.start);
    kernel<<<sms, kPeakThreads, kPeakSmem>>>(iterations, r.sink);
    cudaEventRecord(r.stop);
    if ((err = cudaEventSynchronize(r.stop)) != cudaSuccess) return fail("peak kernel", err);
    cudaEventElapsedTime(&ms, r.start, r.stop);
    spent += ms;
    rates.push_back(flops_per_iteration * iterations / (ms * 1e-3) / 1e12);
  }
  std::vector<double> late(rates.begin() + rates.size() / 2, rates.end());
  std::sort(late.begin(), late.end());
  return late[late.size() / 2];
}

}  // namespace

}  // namespace tcgemm::sm90

namespace tcgemm {
inline namespace TCGEMM_ABI_NAMESPACE {
double measure_peak_tflops(DType dtype, double milliseconds, std::string* why) noexcept {
  try {
    return dtype == DType::bf16 ? sm90::measure<__nv_bfloat16>(milliseconds, why)
                                : sm90::measure<__half>(milliseconds, why);
  } catch (...) {
    return -1.0;
  }
}
}  // inline namespace TCGEMM_ABI_NAMESPACE
}  // namespace tcgemm
