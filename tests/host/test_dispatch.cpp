// Dispatch without a GPU: the option checks (the API's and each family's)
// and decide(), the choice of what runs a call on a given device, with the
// plan's structured fields and the kernel name made from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "common/host/launch.cuh"
#include "common/host/validate.hpp"
#include "common/output_policy.hpp"
#include "dispatch/dispatch.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm90/sm90_gemm.hpp"
#include "support/kernel_variants.hpp"
#include "host_support.hpp"

namespace tcgemm::detail {
namespace {

using tcgemm::test::contains;

bool built(const char* arch) { return std::strstr(TCGEMM_TEST_ARCHS, arch) != nullptr; }

const DeviceInfo kH200{0, 9, 0, 132, "H200 (test)", cudaSuccess};
const DeviceInfo kB200{0, 10, 0, 148, "B200 (test)", cudaSuccess};
const DeviceInfo kA100{0, 8, 0, 108, "A100 (test)", cudaSuccess};

// Never dereferenced: decide() looks at alignment only.
GemmArgs aligned_args(int64_t m = 4096, int64_t n = 4096, int64_t k = 4096) {
  GemmArgs g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = reinterpret_cast<const void*>(uintptr_t{0x7f0000100000});
  g.lda = k;
  g.b = reinterpret_cast<const void*>(uintptr_t{0x7f0010000000});
  g.ldb = n;
  g.c = reinterpret_cast<void*>(uintptr_t{0x7f0020000000});
  g.ldc = n;
  return g;
}

Options forced(int block_n, int cluster_m = 0, bool pingpong = false, Schedule schedule = Schedule::automatic,
               int block_m = 0, int cluster_n = 0) {
  Options o;
  o.block_n = block_n;
  o.cluster_m = cluster_m;
  o.pingpong = pingpong;
  o.schedule = schedule;
  o.block_m = block_m;
  o.cluster_n = cluster_n;
  return o;
}
Options forced(const TileConfig& tc) {
  Options o = forced(tc.block_n, tc.cluster_m, tc.pingpong, Schedule::automatic, tc.block_m, tc.cluster_n);
  o.swap_ab = tc.swap_ab;
  return o;
}
// An sm100 configuration by name: its width, its CTA group (single-CTA tiles
// by cluster_m 1, or with cluster_m 0 by `rows`), schedule and swap.
Options forced(const Sm100TileConfig& tc, int cluster_m, int rows = 0) {
  Options o = forced(tc.block_n, cluster_m, false, tc.schedule, rows);
  o.swap_ab = tc.swap_ab;
  return o;
}

TEST(CheckOptions, AcceptsTheDefaultsAndEveryBuiltInConfiguration) {
  EXPECT_EQ(check_options(Options{}), "");
  for (TileConfig tc : kTileConfigs) {
    if (tc.cluster_n == 1 && !tc.swap_ab) {
      EXPECT_EQ(check_options(forced(tc.block_n, tc.cluster_m, tc.pingpong)), "");
    }
    EXPECT_EQ(check_options(forced(tc)), "");
  }
  for (Sm100TileConfig tc : kSm100TileConfigs) EXPECT_EQ(check_options(forced(tc, tc.cta_group == 1 ? 1 : 0)), "");
}

TEST(CheckOptions, NamesWhatIsWrong) {
  Options o;
  o.prefer = static_cast<Prefer>(5);
  EXPECT_EQ(check_options(o), "unknown Options::prefer 5");
  o = Options{};
  o.schedule = static_cast<Schedule>(-1);
  EXPECT_EQ(check_options(o), "unknown Options::schedule -1");
  // The sm90 family's own check names the configurations it builds; the
  // API's takes what either family builds (ForcesWhatEitherFamilyBuilds).
  EXPECT_EQ(sm90::check_config_options(forced(100)),
            "Options::block_n must be 0 (automatic) or one of 8, 16, 32, 40, 48, 64, 96, 112, 128, 136, 144, 152, 160, 176, "
            "192, 200, 208, 224, 256, not 100");
  // The swapped kernel: 128 rows (or 256: 136, 144, 152, 160), no cluster or ping-pong, its own widths; 136, 152,
  // 176, 200, 208 and 224 only swapped.
  Options swap = forced(144);
  swap.swap_ab = true;
  EXPECT_EQ(sm90::check_config_options(swap), "");
  swap.block_n = 0;
  EXPECT_EQ(sm90::check_config_options(swap), "");
  swap.block_n = 128;
  EXPECT_EQ(sm90::check_config_options(swap),
            "Options::swap_ab runs tiles without a cluster or ping-pong, block_m 0 or 128 with block_n 0 (automatic) or "
            "one of 136, 144, 152, 160, 176, 200, 208, 224, or block_m 256 with block_n 0 or one of 136, 144, 152, 160; "
            "asked for block_n=128 block_m=0 cluster_m=0 cluster_n=0 pingpong=false");
  swap.block_m = 256;
  EXPECT_TRUE(contains(sm90::check_config_options(swap), "asked for block_n=128 block_m=256")) << sm90::check_config_options(swap);
  for (const int width : {0, 144, 152, 160}) {
    swap.block_n = width;
    EXPECT_EQ(sm90::check_config_options(swap), "") << width;
  }
  swap.block_n = 200;  // (swapped only at 128 rows)
  EXPECT_TRUE(contains(sm90::check_config_options(swap), "asked for block_n=200 block_m=256")) << sm90::check_config_options(swap);
  swap.block_m = 64;
  swap.block_n = 0;
  EXPECT_TRUE(contains(sm90::check_config_options(swap), "asked for block_n=0 block_m=64")) << sm90::check_config_options(swap);
  swap.block_m = 0;
  swap.block_n = 0;
  swap.pingpong = true;
  EXPECT_TRUE(contains(sm90::check_config_options(swap), "pingpong=true")) << sm90::check_config_options(swap);
  EXPECT_EQ(sm90::check_config_options(forced(208)),
            "Options::block_n=208 is built only for the sm90 swapped kernel (Options::swap_ab = true)");
  // sm100 builds its own swapped tiles (widths in steps of 16, 128 rows), not sm90's 152 or 256-row ones.
  Options swap100;
  swap100.swap_ab = true;
  EXPECT_EQ(sm100::check_options(swap100), "");
  swap100.block_n = 152;
  EXPECT_EQ(sm100::check_options(swap100),
            "Options::block_n must be 0, 144, 160, 176, 208 or 224 with Options::swap_ab on sm_100 (the swapped tiles' "
            "widths: the rows of C a tile covers), not 152");
  swap100.block_n = 144;
  swap100.block_m = 256;
  EXPECT_TRUE(contains(sm100::check_options(swap100), "128 of N a tile")) << sm100::check_options(swap100);
  EXPECT_EQ(sm90::check_config_options(forced(0, 0, false, Schedule::automatic, 96)),
            "Options::block_m must be 0 (automatic), 8, 64, 128 or 256, not 96");
  EXPECT_EQ(sm90::check_config_options(forced(96, 0, false, Schedule::automatic, 8)),
            "Options block_n=96 cluster_m=0 pingpong=false block_m=8 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(0, 2, false, Schedule::automatic, 8)),
            "Options block_n=0 cluster_m=2 pingpong=false block_m=8 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(0, 0, false, Schedule::automatic, 8)), "");
  EXPECT_EQ(sm90::check_config_options(forced(32, 1, false, Schedule::automatic, 8)), "");
  // The tall tile: 64 to 128 wide, no cluster, no ping-pong.
  EXPECT_EQ(sm90::check_config_options(forced(112, 0, false, Schedule::automatic, 256)), "");
  EXPECT_EQ(sm90::check_config_options(forced(192, 0, false, Schedule::automatic, 256)),
            "Options block_n=192 cluster_m=0 pingpong=false block_m=256 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(128, 0, true, Schedule::automatic, 256)),
            "Options block_n=128 cluster_m=0 pingpong=true block_m=256 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(16, 0, false, Schedule::automatic, 128)),
            "Options block_n=16 cluster_m=0 pingpong=false block_m=128 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(128, 2, false, Schedule::automatic, 64)),
            "Options block_n=128 cluster_m=2 pingpong=false block_m=64 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(64, 2)),
            "Options block_n=64 cluster_m=2 pingpong=false is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(0, 0, true)),
            "Options block_n=0 cluster_m=0 pingpong=true is not a built-in configuration (kTileConfigs)");
  // A cluster along N: built for the 128-row tiles 64 and 96 wide, cluster_m 0 or 1, no ping-pong.
  EXPECT_EQ(sm90::check_config_options(forced(64, 0, false, Schedule::automatic, 0, 2)), "");
  EXPECT_EQ(sm90::check_config_options(forced(96, 1, false, Schedule::automatic, 128, 2)), "");
  EXPECT_EQ(sm90::check_config_options(forced(128, 0, false, Schedule::automatic, 0, 2)),
            "Options block_n=128 cluster_m=0 pingpong=false cluster_n=2 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(256, 0, false, Schedule::automatic, 0, 2)),
            "Options block_n=256 cluster_m=0 pingpong=false cluster_n=2 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(128, 2, false, Schedule::automatic, 0, 2)),
            "Options block_n=128 cluster_m=2 pingpong=false cluster_n=2 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(128, 1, true, Schedule::automatic, 0, 2)),
            "Options block_n=128 cluster_m=1 pingpong=true cluster_n=2 is not a built-in configuration (kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(64, 0, false, Schedule::automatic, 64, 2)),
            "Options block_n=64 cluster_m=0 pingpong=false block_m=64 cluster_n=2 is not a built-in configuration "
            "(kTileConfigs)");
  EXPECT_EQ(sm90::check_config_options(forced(0, 0, false, Schedule::automatic, 0, 2)),
            "Options block_n=0 cluster_m=0 pingpong=false cluster_n=2 is not a built-in configuration (kTileConfigs)");
}

TEST(CheckOptions, ForcesWhatEitherFamilyBuilds) {
  // What sm100 alone builds passes the device-independent check (the sm90
  // device then refuses it in decide), and so does what sm90 alone builds.
  for (const Options& o : {forced(256, 0, false, Schedule::automatic, 256), forced(16, 1, false, Schedule::automatic, 128),
                           forced(48, 1, false, Schedule::automatic, 128), forced(0, 1), forced(0, 2)}) {
    EXPECT_NE(sm90::check_config_options(o), "");
    EXPECT_EQ(sm100::check_options(o), "");
    EXPECT_EQ(check_options(o), "");
  }
  const Options sm90_only = forced(144, 0, false, Schedule::automatic, 128);
  EXPECT_EQ(sm90::check_config_options(sm90_only), "");
  EXPECT_NE(sm100::check_options(sm90_only), "");
  EXPECT_EQ(check_options(sm90_only), "");
  // Neither: both families' reasons.
  const Options neither = forced(16, 0, false, Schedule::automatic, 256);
  EXPECT_EQ(check_options(neither),
            "no kernel family builds these Options: on sm_90, " + sm90::check_config_options(neither) +
                "; on sm_100, " + sm100::check_options(neither));
}

// Every configuration the tools force (check --all-configs, bench --configs
// all) passes the API's check and its own family's, and is taken by
// decide() in exactly the layouts it says it builds.
TEST(CheckOptions, EveryVariantTheToolsForceIsAccepted) {
  for (const Backend family : {Backend::sm90, Backend::sm100}) {
    std::vector<support::KernelVariant> variants = support::builtin_variants(family);
    for (support::KernelVariant& v : support::grouped_variants(family)) variants.push_back(std::move(v));
    ASSERT_FALSE(variants.empty());
    for (const support::KernelVariant& v : variants) {
      EXPECT_EQ(check_options(v.options), "") << v.label;
      EXPECT_EQ(family == Backend::sm90 ? sm90::check_options(v.options) : sm100::check_options(v.options), "")
          << v.label;
    }
  }
}

// A forced configuration not built for the call's layout: the reason names
// the part of builds_for_layout the call misses.
TEST(Decide, ALayoutAForcedConfigurationLacksIsNamed) {
  if (!built("sm_90a")) GTEST_SKIP() << "this build has no sm90 kernels";
  GemmArgs g = aligned_args();
  g.op_a = Op::T;
  Options swap = forced(136);
  swap.swap_ab = true;
  EXPECT_TRUE(contains(decide(g, swap, kH200).plan.reason,
                       "Options::swap_ab (the swapped kernel) is built for A stored K-major only"));
  g.op_a = Op::N;  // (op_b = N: B stored K x N, which the swapped kernel loads too)
  EXPECT_EQ(decide(g, swap, kH200).plan.status, Status::ok);
  EXPECT_TRUE(contains(decide(g, forced(40, 0, false, Schedule::automatic, 64), kH200).plan.reason,
                       "Options::block_n=40 (not whole 16-column panels) is built for B stored K-major only"));
}

TEST(Decide, VariantsBuildExactlyTheLayoutsTheDispatcherTakes) {
  for (const Backend family : {Backend::sm90, Backend::sm100}) {
    if (!built(family == Backend::sm90 ? "sm_90a" : "sm_100a")) continue;
    const DeviceInfo& dev = family == Backend::sm90 ? kH200 : kB200;
    for (const support::KernelVariant& v : support::builtin_variants(family))
      for (const Op op_a : {Op::N, Op::T})
        for (const Op op_b : {Op::N, Op::T}) {
          GemmArgs g = aligned_args();
          g.op_a = op_a;
          g.op_b = op_b;
          const Decision d = decide(g, v.options, dev);
          EXPECT_EQ(d.plan.status == Status::ok, v.builds(op_a, op_b))
              << v.label << " " << to_string(op_a) << to_string(op_b) << ": " << d.plan.reason;
        }
  }
}

TEST(CheckOptions, SmCountIsANumberOfSmsForAPersistentGrid) {
  Options o;
  o.sm_count = 100;
  EXPECT_EQ(check_options(o), "");
  o.sm_count = -1;
  EXPECT_EQ(check_options(o), "Options::sm_count must be 0 (every SM) or a number of SMs, not -1");
  o.sm_count = 8;
  o.schedule = Schedule::cluster_launch_control;
  EXPECT_TRUE(contains(check_options(o), "Options::sm_count bounds a persistent grid")) << check_options(o);
}

TEST(CheckOptions, EachFamilyRefusesWhatItCannotHonour) {
  EXPECT_EQ(sm90::check_options(Options{}), "");
  EXPECT_EQ(sm100::check_options(Options{}), "");
  EXPECT_EQ(sm90::check_options(forced(0, 0, false, Schedule::cluster_launch_control)),
            "Options::schedule = cluster_launch_control needs an sm_100 GPU (Cluster Launch Control is Blackwell's)");
  EXPECT_EQ(sm90::check_options(forced(0, 0, false, Schedule::counted)), "");
  EXPECT_TRUE(contains(sm100::check_options(forced(0, 0, false, Schedule::counted)),
                       "Options::schedule = counted is sm_90's"));
  EXPECT_EQ(sm90::check_options(forced(100)), sm90::check_config_options(forced(100)));
  EXPECT_EQ(sm100::check_options(forced(24)),
            "Options::block_n must be 0, 8, 16, 32, 40, 48, 64, 96, 128 or 256 on sm_100, not 24");
  EXPECT_EQ(sm100::check_options(forced(128, 2)), "");
  EXPECT_EQ(sm100::check_options(forced(128, 1)), "");
  EXPECT_EQ(sm100::check_options(forced(64)), "");
  EXPECT_TRUE(contains(sm100::check_options(forced(128, 3)), "Options::cluster_m must be 0 (automatic), 1"));
  EXPECT_TRUE(contains(sm100::check_options(forced(128, 1, true)), "pingpong and cluster_n select sm90"));
  EXPECT_TRUE(contains(sm100::check_options(forced(64, 0, false, Schedule::automatic, 0, 2)), "cluster_n"));
  // block_m: 256 (pairs), 128 or 64 (single-CTA tiles), agreeing with cluster_m and block_n.
  EXPECT_EQ(sm100::check_options(forced(128, 0, false, Schedule::automatic, 64)), "");
  EXPECT_EQ(sm100::check_options(forced(8, 1, false, Schedule::automatic, 64)), "");
  EXPECT_EQ(sm100::check_options(forced(0, 0, false, Schedule::automatic, 64)), "");
  EXPECT_EQ(sm100::check_options(forced(0, 0, false, Schedule::automatic, 128)), "");
  EXPECT_EQ(sm100::check_options(forced(256, 2, false, Schedule::cluster_launch_control, 256)), "");
  EXPECT_EQ(sm100::check_options(forced(128, 0, false, Schedule::automatic, 32)),
            "Options::block_m must be 0 (automatic), 256 (pair tiles), 128 or 64 (single-CTA tiles) on sm_100, not 32");
  EXPECT_TRUE(contains(sm100::check_options(forced(128, 1, false, Schedule::automatic, 256)), "disagree"));
  EXPECT_TRUE(contains(sm100::check_options(forced(128, 2, false, Schedule::automatic, 64)), "disagree"));
  EXPECT_EQ(sm100::check_options(forced(8, 0, false, Schedule::automatic, 128)),
            "Options::block_n = 8 is not built for 128-row single-CTA tiles on sm_100 (kSm100TileConfigs)");
  EXPECT_TRUE(contains(sm100::check_options(forced(96, 0, false, Schedule::automatic, 256)),
                       "not built for pair tiles"));
  EXPECT_TRUE(contains(sm100::check_options(forced(0, 0, false, Schedule::cluster_launch_control, 64)),
                       "persistent schedule only"));
  // 8 and 40: 64-row single-CTA widths only.
  EXPECT_EQ(sm100::check_options(forced(8)), "");
  EXPECT_EQ(sm100::check_options(forced(40, 1)), "");
  EXPECT_TRUE(contains(sm100::check_options(forced(40, 2)), "not built for pair tiles"));
  EXPECT_TRUE(contains(sm100::check_options(forced(64, 0, false, Schedule::cluster_launch_control)),
                       "persistent schedule only"));
  EXPECT_TRUE(contains(sm100::check_options(forced(128, 1, false, Schedule::cluster_launch_control)),
                       "persistent schedule only"));
  EXPECT_TRUE(contains(sm100::check_options(forced(64, 2)), "not built for pair tiles"));
  EXPECT_EQ(sm100::check_options(forced(16)), "");
  // 48 and 96: single-CTA widths only, persistent only.
  EXPECT_EQ(sm100::check_options(forced(48)), "");
  EXPECT_EQ(sm100::check_options(forced(96, 1)), "");
  EXPECT_TRUE(contains(sm100::check_options(forced(96, 2)), "not built for pair tiles"));
  EXPECT_TRUE(contains(sm100::check_options(forced(48, 0, false, Schedule::cluster_launch_control)),
                       "persistent schedule only"));
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    EXPECT_EQ(sm100::check_options(forced(tc, tc.cta_group == 1 ? 1 : 0)), "");
    EXPECT_EQ(sm100::check_options(forced(tc, 0, tc.cta_rows * tc.cta_group)), "");
  }
  // The swapped tiles (Options::swap_ab): their widths with it, not without; single-CTA, 128 rows, persistent.
  Options swapped;
  swapped.swap_ab = true;
  EXPECT_EQ(sm100::check_options(swapped), "");
  swapped.block_n = 176;
  EXPECT_EQ(sm100::check_options(swapped), "");
  EXPECT_TRUE(contains(sm100::check_options(forced(176)), "a width of the swapped tiles: with Options::swap_ab"))
      << sm100::check_options(forced(176));
  swapped.block_n = 136;  // (sm90's: tcgen05 takes N in steps of 16 at M = 128)
  EXPECT_TRUE(contains(sm100::check_options(swapped), "must be 0, 144, 160, 176, 208 or 224 with Options::swap_ab"))
      << sm100::check_options(swapped);
  swapped.block_n = 0;
  swapped.block_m = 256;
  EXPECT_TRUE(contains(sm100::check_options(swapped), "single-CTA, 128 of N a tile")) << sm100::check_options(swapped);
  swapped.block_m = 0;
  swapped.cluster_m = 2;
  EXPECT_TRUE(contains(sm100::check_options(swapped), "single-CTA, 128 of N a tile")) << sm100::check_options(swapped);
  swapped.cluster_m = 0;
  swapped.schedule = Schedule::cluster_launch_control;
  EXPECT_TRUE(contains(sm100::check_options(swapped), "persistent schedule only")) << sm100::check_options(swapped);
}

TEST(Decide, KZeroScalesC) {
  for (const DeviceInfo& dev : {kH200, kB200, kA100}) {
    GemmArgs g = aligned_args(256, 256, 0);
    Decision d = decide(g, Options{}, dev);
    EXPECT_EQ(d.plan.status, Status::ok);
    EXPECT_EQ(d.plan.path, Path::scale);
    EXPECT_EQ(d.plan.backend, Backend::none);
    EXPECT_EQ(d.plan.kernel, "scale_c");
    EXPECT_EQ(d.plan.reason, "K is 0: C = 0 (beta is 0, C is not read)");
    EXPECT_EQ(d.plan.config.block_n, 0);
    g.beta = 2.0f;
    EXPECT_EQ(decide(g, Options{}, dev).plan.reason, "K is 0: C = beta * C");
    // Whatever Options::prefer: no product, so no cuBLAS call either.
    EXPECT_EQ(decide(g, Options{Prefer::cublas_only, 0}, dev).plan.path, Path::scale);
    EXPECT_EQ(decide(g, Options{Prefer::tcgemm_only, 0}, dev).plan.path, Path::scale);
  }
}

// alpha == 0: as K == 0, C = beta * C without reading A or B (BLAS), on
// every device and whatever Options::prefer.
TEST(Decide, AlphaZeroScalesC) {
  for (const DeviceInfo& dev : {kH200, kB200, kA100}) {
    GemmArgs g = aligned_args(256, 256, 512);
    g.alpha = 0.0f;
    for (const Prefer prefer : {Prefer::automatic, Prefer::tcgemm_only, Prefer::cublas_only}) {
      const Decision d = decide(g, Options{prefer, 0}, dev);
      EXPECT_EQ(d.plan.status, Status::ok);
      EXPECT_EQ(d.plan.path, Path::scale);
      EXPECT_EQ(d.plan.kernel, "scale_c");
      EXPECT_EQ(d.plan.reason, "alpha is 0: C = 0 (beta is 0, C is not read, A and B are not read)");
    }
    g.beta = 0.5f;
    g.activation = Activation::relu;
    EXPECT_EQ(decide(g, Options{}, dev).plan.reason, "alpha is 0: C = act(bias) + beta * C (A and B are not read)");
  }
}

TEST(Decide, CublasWhenAskedFor) {
  const Decision d = decide(aligned_args(), Options{Prefer::cublas_only, 0}, kH200);
  EXPECT_EQ(d.plan.path, Path::cublas);
  EXPECT_EQ(d.plan.backend, Backend::cublas);
  EXPECT_EQ(d.plan.kernel, "cublasGemmEx");
  EXPECT_EQ(d.plan.reason, "cuBLAS requested");
  EXPECT_TRUE(std::holds_alternative<std::monostate>(d.config));
}

TEST(Decide, Sm90KernelWithItsConfigurationInThePlan) {
  if (!built("sm_90a")) GTEST_SKIP() << "this build has no sm90 kernels";
  GemmArgs g = aligned_args();
  g.op_b = Op::T;  // B K-major: every configuration is built for it
  g.ldb = g.k;
  for (TileConfig tc : kTileConfigs) {
    const Options o = forced(tc);
    const Decision d = decide(g, o, kH200);
    ASSERT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.path, Path::kernel);
    EXPECT_EQ(d.plan.backend, Backend::sm90);
    EXPECT_EQ(d.plan.reason, "sm_90 device, operands TMA-compatible");
    const sm90::Config want =
        sm90::select_config(g.m, g.n, g.k, kH200.num_sms, tc.block_n, tc.cluster_m, tc.pingpong, tc.block_m,
                            tc.cluster_n, tc.swap_ab);
    const sm90::Config* got = std::get_if<sm90::Config>(&d.config);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->num_ctas, want.num_ctas);
    const KernelConfig& k = d.plan.config;
    EXPECT_EQ(k.block_m, tc.block_m);
    EXPECT_EQ(k.block_n, tc.block_n);
    EXPECT_EQ(k.block_k, tc.block_m == 8 ? 256 : 64);
    EXPECT_EQ(k.stages, want.stages);
    EXPECT_EQ(k.cluster_m, tc.cluster_m);
    EXPECT_EQ(k.cluster_n, tc.cluster_n);
    EXPECT_EQ(k.pingpong, tc.pingpong);
    EXPECT_EQ(k.swap_ab, tc.swap_ab);
    EXPECT_EQ(k.schedule, Schedule::persistent);
    EXPECT_EQ(d.plan.kernel, "sm90_gemm_persistent<f16,NT," + std::to_string(tc.block_m) + "x" +
                                 std::to_string(tc.block_n) + "x" + std::to_string(k.block_k) + ", " +
                                 std::to_string(want.stages) + " stages" +
                                 (tc.cluster_m == 2 ? ", cluster 2x1 (B multicast)" : "") +
                                 (tc.cluster_n == 2 ? ", cluster 1x2 (A multicast)" : "") +
                                 (tc.pingpong ? ", ping-pong" : "") +
                                 (tc.swap_ab ? ", swapped (C^T = B^T A^T)" : "") + ">");
  }
}

// Options::pdl reaches the launch: the configuration carries it, and the
// launch configuration asks for programmatic stream serialization exactly
// when it is set (beside the cluster dimension when there is a cluster).
TEST(Decide, PdlFollowsTheOption) {
  const GemmArgs g = aligned_args();
  Options off;
  off.pdl = false;
  if (built("sm_90a")) {
    EXPECT_TRUE(std::get<sm90::Config>(decide(g, Options{}, kH200).config).pdl) << "on by default";
    EXPECT_FALSE(std::get<sm90::Config>(decide(g, off, kH200).config).pdl);
  }
  if (built("sm_100a")) {
    EXPECT_TRUE(std::get<sm100::Config>(decide(g, Options{}, kB200).config).pdl) << "on by default";
    EXPECT_FALSE(std::get<sm100::Config>(decide(g, off, kB200).config).pdl);
  }
  for (const int cluster_m : {1, 2})
    for (const bool pdl : {false, true}) {
      LaunchAttributes attrs{};
      const cudaLaunchConfig_t cfg = launch_config(132, 384, cluster_m, 1024, nullptr, attrs, pdl);
      const std::string what = "cluster_m=" + std::to_string(cluster_m) + " pdl=" + (pdl ? "true" : "false");
      ASSERT_EQ(cfg.numAttrs, static_cast<unsigned>((cluster_m > 1) + pdl)) << what;
      int clusters = 0, pdls = 0;
      for (unsigned i = 0; i < cfg.numAttrs; ++i) {
        const cudaLaunchAttribute& a = cfg.attrs[i];
        if (a.id == cudaLaunchAttributeClusterDimension) {
          ++clusters;
          EXPECT_EQ(a.val.clusterDim.x, static_cast<unsigned>(cluster_m)) << what;
        } else if (a.id == cudaLaunchAttributeProgrammaticStreamSerialization) {
          ++pdls;
          EXPECT_EQ(a.val.programmaticStreamSerializationAllowed, 1) << what;
        }
      }
      EXPECT_EQ(clusters, cluster_m > 1 ? 1 : 0) << what;
      EXPECT_EQ(pdls, pdl ? 1 : 0) << what;
    }
}

// C larger than L2 at a short K is stored evict-first
// (common/output_policy.hpp): every problem of a batch counts; a C that
// fits does not, nor a K past kEvictFirstMaxK, nor any C on a device whose
// L2 is not known; both families' configurations carry the choice.
TEST(Decide, ACLargerThanL2AtAShortKIsStoredEvictFirst) {
  constexpr int64_t kL2 = int64_t{50} << 20;
  EXPECT_FALSE(c_stores_evict_first(4096, 4096, 128, 1, 2, kL2)) << "32 MiB of C";
  EXPECT_FALSE(c_stores_evict_first(5120, 5120, 128, 1, 2, kL2)) << "exactly L2's size";
  EXPECT_TRUE(c_stores_evict_first(5120, 5121, 128, 1, 2, kL2));
  EXPECT_TRUE(c_stores_evict_first(8192, 8192, 256, 1, 2, kL2)) << "128 MiB of C";
  EXPECT_FALSE(c_stores_evict_first(8192, 8192, 257, 1, 2, kL2)) << "K past the bound";
  EXPECT_FALSE(c_stores_evict_first(8192, 8192, 8192, 1, 2, kL2)) << "a long K";
  EXPECT_FALSE(c_stores_evict_first(2048, 2048, 128, 6, 2, kL2)) << "48 MiB over 6 problems";
  EXPECT_TRUE(c_stores_evict_first(2048, 2048, 128, 128, 2, kL2)) << "1 GiB over 128 problems";
  EXPECT_FALSE(c_stores_evict_first(8192, 8192, 128, 1, 2, 0)) << "L2's size not known";
  EXPECT_TRUE(c_stores_evict_first(int64_t{1} << 31, int64_t{1} << 31, 64, 65536, 2, kL2)) << "no overflow";

  DeviceInfo h200 = kH200, b200 = kB200;
  h200.l2_bytes = kL2;
  b200.l2_bytes = int64_t{126} << 20;
  for (const int64_t k : {int64_t{128}, int64_t{4096}}) {
    for (const bool large : {false, true}) {
      GemmArgs g = aligned_args(large ? 16384 : 4096, 8192, k);  // 256 or 64 MiB of C
      g.op_b = Op::T;
      g.ldb = g.k;
      if (built("sm_90a")) {
        EXPECT_EQ(std::get<sm90::Config>(decide(g, Options{}, h200).config).c_evict_first, k == 128) << g.m << " " << k;
        EXPECT_FALSE(std::get<sm90::Config>(decide(g, Options{}, kH200).config).c_evict_first) << "L2 not known";
      }
      if (built("sm_100a")) {
        EXPECT_EQ(std::get<sm100::Config>(decide(g, Options{}, b200).config).c_evict_first, large && k == 128)
            << g.m << " " << k;
      }
    }
  }
}

// The tiles 8 and 40 wide (not whole 16-column panels) are built for B
// stored K-major only: a call that forces one with B stored MN-major is
// refused, saying why. The other narrow widths take both layouts.
TEST(Decide, NarrowSmallMTileNeedsBStoredKMajor) {
  if (!built("sm_90a")) GTEST_SKIP() << "this build has no sm90 kernels";
  const GemmArgs g = aligned_args(16, 4096, 4096);  // op_b = N
  for (const int width : {8, 40}) {
    const Decision d = decide(g, forced(width), kH200);
    EXPECT_EQ(d.plan.status, Status::invalid_argument) << width;
    EXPECT_TRUE(contains(d.plan.reason, "built for B stored K-major only")) << d.plan.reason;
  }
  for (const int width : {16, 32, 48, 96}) {
    const Decision d = decide(g, forced(width), kH200);
    ASSERT_EQ(d.plan.status, Status::ok) << width << ": " << d.plan.reason;
    EXPECT_EQ(d.plan.config.block_m, 64);
    EXPECT_EQ(d.plan.config.block_n, width);
  }
  // Automatic, with B streamed (M <= 64): whole 64-wide panels.
  const Decision a = decide(g, Options{}, kH200);
  ASSERT_EQ(a.plan.status, Status::ok) << a.plan.reason;
  EXPECT_EQ(a.plan.config.block_m, 64);
  EXPECT_EQ(a.plan.config.block_n, 64);
}

// The 8-row decode tile is built for A and B stored K-major only (op_a = N,
// op_b = T): forced on another layout it is refused, saying why; chosen
// automatically for M <= 8 on that layout only.
TEST(Decide, DecodeTileNeedsAAndBStoredKMajor) {
  if (!built("sm_90a")) GTEST_SKIP() << "this build has no sm90 kernels";
  GemmArgs nt = aligned_args(4, 4096, 4096);
  nt.op_b = Op::T;
  nt.ldb = nt.k;
  const Decision ok = decide(nt, forced(32, 0, false, Schedule::automatic, 8), kH200);
  ASSERT_EQ(ok.plan.status, Status::ok) << ok.plan.reason;
  EXPECT_EQ(ok.plan.config.block_m, 8);
  EXPECT_EQ(ok.plan.config.block_n, 32);
  EXPECT_EQ(ok.plan.config.block_k, 256);
  EXPECT_TRUE(contains(ok.plan.kernel, "<f16,NT,8x32x256, 11 stages>")) << ok.plan.kernel;
  // Automatic at M = 4: the decode tile.
  const Decision automatic = decide(nt, Options{}, kH200);
  ASSERT_EQ(automatic.plan.status, Status::ok) << automatic.plan.reason;
  EXPECT_EQ(automatic.plan.config.block_m, 8);
  for (const auto& [op_a, op_b] : {std::pair{Op::T, Op::T}, std::pair{Op::N, Op::N}, std::pair{Op::T, Op::N}}) {
    GemmArgs g = aligned_args(4, 4096, 4096);
    g.op_a = op_a;
    g.op_b = op_b;
    g.lda = op_a == Op::N ? g.k : g.m + 4;  // (a multiple of 8 either way)
    g.ldb = op_b == Op::T ? g.k : g.n;
    const std::string layout = std::string(to_string(op_a)) + to_string(op_b);
    const Decision d = decide(g, forced(32, 0, false, Schedule::automatic, 8), kH200);
    EXPECT_EQ(d.plan.status, Status::invalid_argument) << layout;
    EXPECT_TRUE(contains(d.plan.reason, "Options::block_m=8 (the decode tile) is built for A and B stored K-major only"))
        << d.plan.reason;
    EXPECT_TRUE(contains(d.plan.reason, "this call has op_a = " + std::string(to_string(op_a)) +
                                            ", op_b = " + to_string(op_b)))
        << d.plan.reason;
    // Not chosen automatically there.
    const Decision a = decide(g, Options{}, kH200);
    ASSERT_EQ(a.plan.status, Status::ok) << layout << ": " << a.plan.reason;
    EXPECT_EQ(a.plan.config.block_m, 64) << layout;
  }
}

TEST(Decide, Sm100KernelWithItsConfigurationInThePlan) {
  if (!built("sm_100a")) GTEST_SKIP() << "this build has no sm100 kernels";
  GemmArgs g = aligned_args();
  g.dtype = DType::bf16;
  g.op_b = Op::T;
  g.ldb = g.k;
  for (Sm100TileConfig tc : kSm100TileConfigs) {
    const int rows = tc.cta_rows * tc.cta_group;
    const Decision d = decide(g, forced(tc, tc.cta_group == 1 ? 1 : 0, rows), kB200);
    ASSERT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.path, Path::kernel);
    EXPECT_EQ(d.plan.backend, Backend::sm100);
    ASSERT_TRUE(std::holds_alternative<sm100::Config>(d.config));
    const KernelConfig& k = d.plan.config;
    EXPECT_EQ(k.block_m, rows);
    EXPECT_EQ(k.block_n, tc.block_n);
    EXPECT_EQ(k.cluster_m, tc.cta_group);
    EXPECT_EQ(k.schedule, tc.schedule);
    const bool clc = tc.schedule == Schedule::cluster_launch_control;
    EXPECT_EQ(d.plan.kernel, "sm100_gemm<bf16,NT," + std::to_string(rows) + "x" +
                                 std::to_string(tc.block_n) + "x" + std::to_string(k.block_k) + ", " +
                                 std::to_string(k.stages) + " stages, " +
                                 (clc ? "cluster launch control" : "persistent") +
                                 (tc.swap_ab ? ", swapped (C^T = B^T A^T)" : "") + ">");
    EXPECT_EQ(k.swap_ab, tc.swap_ab);
  }
}

// A call bounded to S SMs (Options::sm_count) is planned as on a device of S
// SMs: the same configuration, and a grid of at most S CTAs (one SM: no
// pair tiles on sm100), persistent on sm100 too. More SMs than the device
// has, or 0: all of them.
TEST(Decide, SmCountPlansAsOnADeviceOfThatManySms) {
  for (const bool sm100 : {false, true}) {
    if (!built(sm100 ? "sm_100a" : "sm_90a")) continue;
    const DeviceInfo& dev = sm100 ? kB200 : kH200;
    for (const auto& [m, n, k] : {std::tuple{4096, 4096, 4096}, {64, 8192, 4096}, {1, 4096, 14336}, {2048, 3072, 1024}}) {
      GemmArgs g = aligned_args(m, n, k);
      g.op_b = Op::T;
      g.ldb = g.k;
      for (const int sms : {dev.num_sms - 8, 96, 64, 17, 2, 1, dev.num_sms, dev.num_sms + 10}) {
        Options bounded;
        bounded.sm_count = sms;
        DeviceInfo smaller = dev;
        smaller.num_sms = std::min(sms, dev.num_sms);
        Options persistent;
        persistent.schedule = sm100 ? Schedule::persistent : Schedule::automatic;
        const Decision got = decide(g, bounded, dev), want = decide(g, persistent, smaller);
        ASSERT_EQ(got.plan.status, Status::ok) << got.plan.reason;
        EXPECT_EQ(got.plan.kernel, want.plan.kernel) << m << "x" << n << "x" << k << " on " << sms << " SMs";
        int ctas = 0;
        if (const auto* c = std::get_if<sm90::Config>(&got.config)) {
          EXPECT_EQ(c->num_ctas, std::get<sm90::Config>(want.config).num_ctas);
          ctas = c->num_ctas;
        } else {
          const auto& c100 = std::get<sm100::Config>(got.config);
          EXPECT_EQ(c100.schedule, Schedule::persistent);
          EXPECT_EQ(c100.grid_clusters, std::get<sm100::Config>(want.config).grid_clusters);
          ctas = c100.grid_clusters * c100.cta_group();
        }
        EXPECT_LE(ctas, smaller.num_sms) << got.plan.kernel << " on " << sms << " SMs";
      }
    }
  }
}

// A cluster forced (sm90's 2x1, sm100's pair tiles) on fewer SMs than its
// CTAs: refused, saying so, rather than a grid wider than Options::sm_count.
TEST(Decide, AClusterForcedOnFewerSmsIsRefused) {
  for (const bool sm100 : {false, true}) {
    if (!built(sm100 ? "sm_100a" : "sm_90a")) continue;
    const DeviceInfo& dev = sm100 ? kB200 : kH200;
    Options o = sm100 ? forced(256, 2) : forced(128, 2);
    EXPECT_EQ(decide(aligned_args(), o, dev).plan.status, Status::ok) << decide(aligned_args(), o, dev).plan.reason;
    o.sm_count = 2;
    EXPECT_EQ(decide(aligned_args(), o, dev).plan.status, Status::ok) << decide(aligned_args(), o, dev).plan.reason;
    o.sm_count = 1;
    const Decision d = decide(aligned_args(), o, dev);
    EXPECT_EQ(d.plan.status, Status::invalid_argument);
    EXPECT_TRUE(contains(d.plan.reason, "Options::sm_count = 1 is fewer SMs than the 2 CTAs of the cluster"))
        << d.plan.reason;
  }
}

TEST(Decide, FallsBackWhereTheKernelCannotTakeTheCall) {
  GemmArgs g = aligned_args();
  g.lda = g.k + 1;  // rows not 16-byte aligned
  for (const DeviceInfo& dev : {kH200, kB200, kA100}) {
    const Decision d = decide(g, Options{}, dev);
    EXPECT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.path, Path::cublas);
    EXPECT_EQ(d.plan.backend, Backend::cublas);
    EXPECT_EQ(d.plan.kernel, "cublasGemmEx");
    EXPECT_TRUE(contains(d.plan.reason, "fallback: ")) << d.plan.reason;
    EXPECT_EQ(d.plan.config.block_n, 0);
    Options only;
    only.prefer = Prefer::tcgemm_only;
    const Decision refused = decide(g, only, dev);
    EXPECT_EQ(refused.plan.status, Status::unsupported);
    EXPECT_TRUE(contains(refused.plan.reason, "tcgemm: no tcgemm kernel can take this call: ")) << refused.plan.reason;
    EXPECT_TRUE(contains(refused.plan.reason, "m=4096 n=4096 k=4096")) << refused.plan.reason;
  }
  EXPECT_TRUE(contains(decide(aligned_args(), Options{}, kA100).plan.reason,
                       "fallback: no tcgemm kernel for sm_80 (A100 (test)) yet"));
}

// The swapped kernel is built for A stored K-major (op_a = N, the tokens)
// only, B either way: forced with op_a = T, refused with what is wrong;
// with op_a = N it runs, the plan saying so. Chosen automatically with B
// stored either way, never with A MN-major.
TEST(Decide, SwapAbNeedsTheTokensKMajor) {
  if (!built("sm_90a")) GTEST_SKIP() << "this build has no sm90 kernels";
  GemmArgs g = aligned_args();  // op_a = N, op_b = N
  Options o;
  o.swap_ab = true;
  for (const Op op_b : {Op::N, Op::T}) {
    g.op_b = op_b;
    g.ldb = op_b == Op::T ? g.k : g.n;
    const Decision d = decide(g, o, kH200);
    ASSERT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_TRUE(d.plan.config.swap_ab);
    EXPECT_TRUE(contains(d.plan.kernel, std::string("<f16,N") + to_string(op_b))) << d.plan.kernel;
    EXPECT_TRUE(contains(d.plan.kernel, ", swapped (C^T = B^T A^T)>")) << d.plan.kernel;
  }
  g.op_a = Op::T;
  g.lda = g.m;
  const Decision refused = decide(g, o, kH200);
  EXPECT_EQ(refused.plan.status, Status::invalid_argument);
  EXPECT_TRUE(contains(refused.plan.reason, "built for A stored K-major only (op_a = N")) << refused.plan.reason;
  // Automatically: the mid-size product that takes it with B stored either way does not with A MN-major.
  g = aligned_args(3500, 3072, 8192);
  g.ldb = g.n;
  EXPECT_TRUE(decide(g, Options{}, kH200).plan.config.swap_ab);
  g.op_b = Op::T;
  g.ldb = g.k;
  EXPECT_TRUE(decide(g, Options{}, kH200).plan.config.swap_ab);
  g.op_a = Op::T;
  g.lda = g.m;
  const Decision a_mn = decide(g, Options{}, kH200);
  ASSERT_EQ(a_mn.plan.status, Status::ok) << a_mn.plan.reason;
  EXPECT_FALSE(a_mn.plan.config.swap_ab);
}

TEST(Decide, TheDevicesFamilyChecksTheOptions) {
  const GemmArgs g = aligned_args();
  const Options clc = forced(0, 0, false, Schedule::cluster_launch_control);
  for (const DeviceInfo& dev : {kH200, kA100}) {
    const Decision d = decide(g, clc, dev);
    EXPECT_EQ(d.plan.status, Status::invalid_argument);
    EXPECT_EQ(d.plan.reason, "tcgemm: " + sm90::check_options(clc) + " (" + describe(g) + ")");
  }
  const Decision d = decide(g, forced(24), kB200);
  EXPECT_EQ(d.plan.status, Status::invalid_argument);
  EXPECT_EQ(d.plan.reason, "tcgemm: Options::block_n must be 0, 8, 16, 32, 40, 48, 64, 96, 128 or 256 on sm_100, not 24 (" +
                               describe(g) + ")");
  // The single-CTA widths whose CTA loads part of a 64-column panel of B
  // (8, 16, 32, 40, 48, 96) with B stored MN-major (aligned_args: op_b = N): not built.
  for (const int w : {8, 16, 32, 40, 48, 96}) {
    EXPECT_TRUE(contains(sm100::check_layout(g, forced(w)), "built for B stored K-major only")) << w;
    GemmArgs t = g;
    t.op_b = Op::T;
    t.ldb = t.k;
    EXPECT_EQ(sm100::check_layout(t, forced(w)), "") << w;
  }
  for (const int w : {64, 128, 256}) EXPECT_EQ(sm100::check_layout(g, forced(w)), "") << w;
  // A single-CTA width below 64 with B stored MN-major (aligned_args: op_b = N) is not built.
  if (built("sm_100a")) {
    const Decision mn = decide(g, forced(32), kB200);
    EXPECT_EQ(mn.plan.status, Status::invalid_argument);
    EXPECT_TRUE(contains(mn.plan.reason, "built for B stored K-major only")) << mn.plan.reason;
  }
}

}  // namespace
}  // namespace tcgemm::detail

namespace tcgemm::detail {
namespace {

// The fused epilogue runs on tcgemm's sm90 kernels (and the K == 0 scale);
// every path that cannot apply it refuses the call, saying why, instead of
// running a plain GEMM.
TEST(Decide, FusedEpilogueOnlyWhereItIsApplied) {
  GemmArgs g = aligned_args();
  g.bias = g.a;  // (never dereferenced here)
  g.activation = Activation::silu;
  if (built("sm_90a")) {
    const Decision d = decide(g, Options{}, kH200);
    EXPECT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.backend, Backend::sm90);
  }
  const Decision cublas = decide(g, Options{Prefer::cublas_only, 0}, kH200);
  EXPECT_EQ(cublas.plan.status, Status::unsupported);
  EXPECT_TRUE(contains(cublas.plan.reason, "no fused bias/activation epilogue")) << cublas.plan.reason;
  EXPECT_TRUE(contains(cublas.plan.reason, "activation=silu")) << cublas.plan.reason;
  // sm100: its kernels apply it too (where the build has them); no family: refused.
  const Decision b200 = decide(g, Options{}, kB200);
  EXPECT_EQ(b200.plan.status, built("sm_100a") ? Status::ok : Status::unsupported) << b200.plan.reason;
  EXPECT_EQ(decide(g, Options{}, kA100).plan.status, Status::unsupported);
  GemmArgs unaligned = g;
  unaligned.lda = g.k + 1;
  const Decision refused = decide(unaligned, Options{}, kH200);
  EXPECT_EQ(refused.plan.status, Status::unsupported);
  EXPECT_TRUE(contains(refused.plan.reason, "cuBLAS cannot fuse its bias/activation")) << refused.plan.reason;
  GemmArgs k0 = g;
  k0.k = 0;
  EXPECT_EQ(decide(k0, Options{}, kH200).plan.reason, "K is 0: C = act(bias) (beta is 0, C is not read)");
  k0.beta = 0.5f;
  EXPECT_EQ(decide(k0, Options{}, kA100).plan.reason, "K is 0: C = act(bias) + beta * C");
}

// An M-grouped call runs on tcgemm's sm90 kernel in one of
// kGroupedTileConfigs or the sm100 single-CTA tiles, or is refused: no cuBLAS
// call and no other family computes it. K = 0 is the scale on any device.
TEST(Decide, MGroupedOnTcgemmsKernelsOnly) {
  GemmArgs g = aligned_args(1024, 28672, 4096);
  g.op_b = Op::T;
  g.ldb = g.k;
  g.stride_b = g.n * g.k;
  g.group_ends = reinterpret_cast<const int32_t*>(uintptr_t{0x7f0030000000});
  g.groups = 8;
  if (built("sm_90a")) {
    const Decision d = decide(g, Options{}, kH200);
    ASSERT_EQ(d.plan.status, Status::ok) << d.plan.reason;
    EXPECT_EQ(d.plan.backend, Backend::sm90);
    EXPECT_TRUE(contains(d.plan.kernel, ", M-grouped>")) << d.plan.kernel;
    EXPECT_EQ(d.plan.config.block_n, 256);  // 128 rows a group on average (select_grouped_config)
    for (const TileConfig& tc : kGroupedTileConfigs) {
      const Decision f = decide(g, forced(tc), kH200);
      ASSERT_EQ(f.plan.status, Status::ok) << f.plan.reason;
      EXPECT_EQ(f.plan.config.block_n, tc.block_n);
      EXPECT_EQ(f.plan.config.block_m, tc.block_m);
      EXPECT_EQ(f.plan.config.pingpong, tc.pingpong);
    }
    const Decision narrow = decide(g, forced(64, 1), kH200);
    EXPECT_EQ(narrow.plan.status, Status::invalid_argument);
    EXPECT_TRUE(contains(narrow.plan.reason, "kGroupedTileConfigs")) << narrow.plan.reason;
    // One field alone picks among the grouped tiles, as the header says (once refused: the plain
    // call's kTileConfigs were asked for the whole tuple).
    Options pingpong;
    pingpong.pingpong = true;
    Options no_cluster;
    no_cluster.cluster_m = 1;
    for (const Options& o : {pingpong, no_cluster}) {
      EXPECT_EQ(check_options(o, true), "");
      const Decision one = decide(g, o, kH200);
      ASSERT_EQ(one.plan.status, Status::ok) << one.plan.reason;
      EXPECT_EQ(one.plan.config.pingpong, o.pingpong) << one.plan.kernel;
    }
    EXPECT_NE(check_options(pingpong), "");  // (a plain call's: no such configuration)
  }
  const Decision cublas = decide(g, Options{Prefer::cublas_only, 0}, kH200);
  EXPECT_EQ(cublas.plan.status, Status::unsupported);
  EXPECT_TRUE(contains(cublas.plan.reason, "groups=8")) << cublas.plan.reason;
  const Decision b200 = decide(g, Options{}, kB200);
  if (built("sm_100a")) {
    ASSERT_EQ(b200.plan.status, Status::ok) << b200.plan.reason;
    EXPECT_EQ(b200.plan.backend, Backend::sm100);
    EXPECT_EQ(b200.plan.config.cluster_m, 1);
    EXPECT_TRUE(contains(b200.plan.kernel, ", M-grouped>")) << b200.plan.kernel;
    const Decision pair = decide(g, forced(256, 2), kB200);
    EXPECT_EQ(pair.plan.status, Status::invalid_argument);
    EXPECT_TRUE(contains(pair.plan.reason, "single-CTA")) << pair.plan.reason;
    Options swapped;
    swapped.swap_ab = true;
    const Decision swap = decide(g, swapped, kB200);
    EXPECT_EQ(swap.plan.status, Status::invalid_argument);
    EXPECT_TRUE(contains(swap.plan.reason, "runs unswapped")) << swap.plan.reason;
  } else {
    EXPECT_EQ(b200.plan.status, Status::unsupported);
    EXPECT_TRUE(contains(b200.plan.reason, "no cuBLAS call computes an M-grouped GEMM")) << b200.plan.reason;
  }
  // The swapped tiles are for plain calls, in both families (sm100's accepts swap_ab for those).
  Options swap_ab;
  swap_ab.swap_ab = true;
  EXPECT_EQ(sm100::check_grouped_options(g, swap_ab), "an M-grouped call runs unswapped (Options::swap_ab false)");
  EXPECT_EQ(sm90::check_grouped_options(g, swap_ab), "an M-grouped call runs unswapped (Options::swap_ab false)");
  const Decision a100 = decide(g, Options{}, kA100);
  EXPECT_EQ(a100.plan.status, Status::unsupported);
  EXPECT_TRUE(contains(a100.plan.reason, "no cuBLAS call computes an M-grouped GEMM")) << a100.plan.reason;
  GemmArgs k0 = g;
  k0.k = 0;
  EXPECT_EQ(decide(k0, Options{}, kA100).plan.path, Path::scale);
}

}  // namespace
}  // namespace tcgemm::detail
