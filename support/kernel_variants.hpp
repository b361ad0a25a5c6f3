// Which tcgemm kernel family a device runs, and every built-in configuration
// of that family as forced Options: what `tcgemm check` and `bench --configs
// all` iterate and what the GPU tests compare (all must give the same bits).
#pragma once

#include <string>
#include <vector>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::support {

// Backend::sm90 on compute capability 9.0, Backend::sm100 on 10.0, else
// Backend::none (tcgemm has no kernel family for the device). `device` < 0:
// the current device.
Backend device_family(int device = -1);
// Whether this build of tcgemm holds that family's kernels (its arch, sm_90a
// or sm_100a, is in build_info().cuda_archs); false for Backend::none.
bool family_built(Backend family);

struct KernelVariant {
  Options options;                   // forces this configuration (Prefer::tcgemm_only)
  std::string label;                 // "block_n=128 cluster_m=1 pingpong" / "block_n=256 clc"
  std::vector<std::string> in_name;  // what Plan::kernel must then contain
  std::vector<std::string> not_in_name;  // and must not
  bool b_k_major_only = false;           // built for B stored K-major (op_b = T) only
  bool a_k_major_only = false;           // built for A stored K-major (op_a = N) only

  // Whether this configuration is built for a call whose A and B are stored op_a and op_b.
  bool builds(Op op_a, Op op_b) const {
    return (!b_k_major_only || op_b == Op::T) && (!a_k_major_only || op_a == Op::N);
  }
};

// Every configuration of kTileConfigs (sm90) or kSm100TileConfigs (sm100);
// empty for Backend::none. A caller skips those that do not build() for its
// call's layout (a forced configuration that is not built is refused).
std::vector<KernelVariant> builtin_variants(Backend family);

// Every configuration built for M-grouped calls (GemmArgs::groups):
// kGroupedTileConfigs (sm90), kSm100GroupedWidths' single-CTA tiles (sm100);
// empty for Backend::none. All of them take A K-major, B either way.
std::vector<KernelVariant> grouped_variants(Backend family);

}  // namespace tcgemm::support
