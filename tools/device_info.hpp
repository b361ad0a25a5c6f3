// The facts about the GPU and software stack that go next to every number the
// tool prints: `info` shows them, `bench --json` records them.
#pragma once

#include <cstddef>
#include <string>

namespace tcgemm::cli {

struct DeviceInfo {
  int index = 0;
  int device_count = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_max_khz = 0;   // cudaDevAttrClockRate: the maximum, not the current clock
  int mem_clock_max_khz = 0;  // cudaDevAttrMemoryClockRate
  int mem_bus_width_bits = 0;
  int l2_bytes = 0;
  int smem_per_block_optin = 0;
  size_t total_memory = 0;
  int driver_version = 0;   // cudaDriverGetVersion: newest CUDA the driver supports
  int runtime_version = 0;  // cudaRuntimeGetVersion
  int cublas_major = 0, cublas_minor = 0, cublas_patch = 0;

  // Memory clock x 2 (double data rate) x bus width.
  double peak_bandwidth_gbs() const { return 2.0 * mem_clock_max_khz * 1e3 * (mem_bus_width_bits / 8.0) / 1e9; }
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
  std::string cublas_version() const;
};

// Queries the current device (select_device() first).
DeviceInfo query_device_info();

// 13000 -> "13.0", 12080 -> "12.8".
std::string cuda_version_string(int version);

}  // namespace tcgemm::cli
