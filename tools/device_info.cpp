#include "device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace tcgemm::cli {

std::string DeviceInfo::cublas_version() const {
  return std::to_string(cublas_major) + "." + std::to_string(cublas_minor) + "." + std::to_string(cublas_patch);
}

std::string cuda_version_string(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

DeviceInfo query_device_info() {
  DeviceInfo info;
  CHECK_CUDA(cudaGetDevice(&info.index));
  CHECK_CUDA(cudaGetDeviceCount(&info.device_count));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, info.index));
  info.name = prop.name;
  char bus_id[32] = {};
  CHECK_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, info.index));
  info.pci_bus_id = bus_id;
  info.total_memory = prop.totalGlobalMem;

  // Clocks come from attributes: CUDA 13 removed clockRate and
  // memoryClockRate from cudaDeviceProp.
  auto attribute = [&](cudaDeviceAttr attr) {
    int value = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&value, attr, info.index));
    return value;
  };
  info.cc_major = attribute(cudaDevAttrComputeCapabilityMajor);
  info.cc_minor = attribute(cudaDevAttrComputeCapabilityMinor);
  info.sm_count = attribute(cudaDevAttrMultiProcessorCount);
  info.sm_clock_max_khz = attribute(cudaDevAttrClockRate);
  info.mem_clock_max_khz = attribute(cudaDevAttrMemoryClockRate);
  info.mem_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  info.l2_bytes = attribute(cudaDevAttrL2CacheSize);
  info.smem_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin);

  CHECK_CUDA(cudaDriverGetVersion(&info.driver_version));
  CHECK_CUDA(cudaRuntimeGetVersion(&info.runtime_version));
  CHECK_CUBLAS(cublasGetProperty(MAJOR_VERSION, &info.cublas_major));
  CHECK_CUBLAS(cublasGetProperty(MINOR_VERSION, &info.cublas_minor));
  CHECK_CUBLAS(cublasGetProperty(PATCH_LEVEL, &info.cublas_patch));
  return info;
}

}  // namespace tcgemm::cli
