#include "support/kernel_variants.hpp"

#include <cuda_runtime.h>

#include <cstring>

#include "sm100/sm100_config.hpp"
#include "sm90/sm90_config.hpp"

namespace tcgemm::support {

Backend device_family(int device) {
  if (device < 0 && cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return Backend::none;
  }
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return Backend::none;
  }
  if (major == 9 && minor == 0) return Backend::sm90;
  if (major == 10 && minor == 0) return Backend::sm100;
  return Backend::none;
}

bool family_built(Backend family) {
  const char* arch = family == Backend::sm90 ? "sm_90a" : family == Backend::sm100 ? "sm_100a" : nullptr;
  return arch != nullptr && std::strstr(build_info().cuda_archs, arch) != nullptr;
}

std::vector<KernelVariant> builtin_variants(Backend family) {
  std::vector<KernelVariant> out;
  if (family == Backend::sm90) {
    for (const TileConfig tc : kTileConfigs) {
      KernelVariant v;
      v.options = Options{Prefer::tcgemm_only, tc.block_n, tc.cluster_m, tc.pingpong};
      v.options.block_m = tc.block_m;
      v.options.cluster_n = tc.cluster_n;
      v.options.swap_ab = tc.swap_ab;
      v.label = "block_n=" + std::to_string(tc.block_n) + " cluster_m=" + std::to_string(tc.cluster_m) +
                (tc.pingpong ? " pingpong" : "") + (tc.block_m != 128 ? " block_m=" + std::to_string(tc.block_m) : "") +
                (tc.cluster_n != 1 ? " cluster_n=" + std::to_string(tc.cluster_n) : "") + (tc.swap_ab ? " swap_ab" : "");
      v.in_name = {std::string(",") + std::to_string(tc.block_m) + "x" + std::to_string(tc.block_n) + "x"};
      // (The layouts the kernel is built for: builds_for_layout, as dispatch asks.)
      v.b_k_major_only = !sm90::builds_for_layout(tc.block_m, tc.block_n, true, false, tc.swap_ab);
      v.a_k_major_only = !sm90::builds_for_layout(tc.block_m, tc.block_n, false, true, tc.swap_ab);
      (tc.swap_ab ? v.in_name : v.not_in_name).push_back("swapped");
      (tc.cluster_m == 2 ? v.in_name : v.not_in_name).push_back("cluster 2x1");
      (tc.cluster_n == 2 ? v.in_name : v.not_in_name).push_back("cluster 1x2");
      (tc.pingpong ? v.in_name : v.not_in_name).push_back("ping-pong");
      out.push_back(std::move(v));
    }
  } else if (family == Backend::sm100) {
    for (const Sm100TileConfig tc : kSm100TileConfigs) {
      const bool clc = tc.schedule == Schedule::cluster_launch_control;
      KernelVariant v;
      v.options.prefer = Prefer::tcgemm_only;
      v.options.block_n = tc.block_n;
      v.options.schedule = tc.schedule;
      v.options.cluster_m = tc.cta_group == 1 ? 1 : 0;  // single-CTA tiles are asked for by name
      v.options.block_m = tc.cta_rows * tc.cta_group;   // (and by height: M <= 64 would take 64 rows)
      v.options.swap_ab = tc.swap_ab;
      v.label = "block_n=" + std::to_string(tc.block_n) + (clc ? " clc" : " persistent") +
                (tc.cta_group == 1 ? " single-CTA" : "") + (tc.cta_rows != 128 ? " block_m=64" : "") +
                (tc.swap_ab ? " swap_ab" : "");
      v.in_name = {"," + std::to_string(tc.cta_rows * tc.cta_group) + "x" + std::to_string(tc.block_n) + "x",
                   clc ? "cluster launch control" : "persistent"};
      (tc.swap_ab ? v.in_name : v.not_in_name).push_back("swapped");
      // (The layouts the kernel is built for: builds_for_layout, as dispatch asks.)
      v.b_k_major_only = !sm100::builds_for_layout(tc.block_n, tc.cta_group, true, false, tc.swap_ab);
      v.a_k_major_only = !sm100::builds_for_layout(tc.block_n, tc.cta_group, false, true, tc.swap_ab);
      out.push_back(std::move(v));
    }
  }
  return out;
}

std::vector<KernelVariant> grouped_variants(Backend family) {
  std::vector<KernelVariant> out;
  const auto add = [&](Options o, const std::string& label, const std::string& tile) {
    o.prefer = Prefer::tcgemm_only;
    KernelVariant v;
    v.options = o;
    v.label = label;
    v.in_name = {"M-grouped", tile};
    v.a_k_major_only = true;
    out.push_back(std::move(v));
  };
  if (family == Backend::sm90) {
    for (const TileConfig& t : kGroupedTileConfigs) {
      Options o;
      o.block_n = t.block_n;
      o.block_m = t.block_m;
      o.cluster_m = t.cluster_m;
      o.pingpong = t.pingpong;
      add(o, "grouped " + std::to_string(t.block_m) + "x" + std::to_string(t.block_n) + (t.pingpong ? " pingpong" : ""),
          std::string(",") + std::to_string(t.block_m) + "x" + std::to_string(t.block_n) + "x");
    }
  } else if (family == Backend::sm100) {
    for (const int w : kSm100GroupedWidths) {
      Options o;
      o.block_n = w;
      o.cluster_m = 1;  // the single-CTA tiles
      add(o, "grouped single-CTA 128x" + std::to_string(w), ",128x" + std::to_string(w) + "x");
    }
  }
  return out;
}

}  // namespace tcgemm::support
