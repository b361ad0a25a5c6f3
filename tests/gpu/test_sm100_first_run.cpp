// The first run on a B200: the sm100 cases that a review of the kernel
// against the PTX ISA, CUTLASS and DeepGEMM could not settle without running
// them (README, "Blackwell (sm_100a) status", which lists them in order):
//
//   1. TMA boxes that lie wholly outside the tensor (M <= 128 leaves the odd
//      CTA's A box empty, as does the last m-block's; a B half past N) must
//      still count their full bytes on the leader's smem_full barrier;
//   2. a Cluster Launch Control launch of a single tile, whose first cancel
//      fails;
//   3. the 2-slot CLC response ring wrapping its phase (a cluster reading
//      more than 2 responses);
//   4. the MN-major operand paths (A op T, B op N);
//   5. the N = 128 instruction and operand descriptors (block_n = 128);
//   6. beta != 0 (C loaded by TMA into the epilogue's panel);
//   7. the single-CTA small-M tiles (tcgen05.mma.cta_group::1, M = 128,
//      N = 16-256): their descriptors, commits without multicast, the 1-CTA
//      tensor-memory allocation, A's box cut to M rounded up to 8 rows, the
//      16-, 32- and 48-wide tiles' epilogue from registers, and the widths
//      that are not powers of two (48, 96: N = 48 and 96 in the instruction
//      descriptor, accumulators at columns 0 and 64 or 128, the 96-wide
//      tile's 32-column last panel stored by the threads);
//   8. the 64-row single-CTA tiles (tcgen05.mma.cta_group::1, M = 64, N =
//      8-256, chosen for M <= 64): the accumulator in the first 16 lanes of
//      each epilogue warp's quarter of tensor memory (PTX ISA layout F), the
//      16-row epilogue panels and C map, the 8- and 40-wide tiles;
//   9. the swapped tiles (Options::swap_ab: C^T = B^T A^T, 128 x 144-224):
//      the operands traded, the call's B as an MN-major A, and the epilogue
//      that stores a column of C a thread, neighbouring lanes trading values.
//
// Each case runs every affected sm100 configuration against the reference
// GEMM. A wrong answer fails the test; so does a hang: a -DTCGEMM_DEBUG_HANGS=ON
// build (as the checklist says) traps a stuck barrier wait and names it, and
// in any build a GEMM that has not finished within the watchdog's time
// (TCGEMM_TEST_WATCHDOG_S, default 120 s) ends the process with the case
// named. Once a kernel has trapped, the CUDA context is lost: the tests after
// it fail at once, naming the one that lost it.
//
// On any device but compute capability 10.0 every test here skips, saying why.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "gemm_case.hpp"

namespace tcgemm::test {
namespace {

int watchdog_seconds() {
  const char* v = std::getenv("TCGEMM_TEST_WATCHDOG_S");
  const int s = v != nullptr ? std::atoi(v) : 0;
  return s > 0 ? s : 120;
}

// The test in which a kernel trapped or faulted (the CUDA context is gone).
std::string& context_lost_in() {
  static std::string name;
  return name;
}

std::string current_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "?";
}

class Sm100FirstRun : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (own_backend() != Backend::sm100) {
      int dev = 0;
      cudaDeviceProp prop{};
      check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
      check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
      GTEST_SKIP() << "the sm100 kernels' first-run cases need an sm_100 GPU (B200/GB200); this is " << prop.name
                   << ", compute capability " << prop.major << "." << prop.minor
                   << ", where the sm90 family runs instead";
    }
    if (!context_lost_in().empty())
      FAIL() << "not run: the CUDA context was lost in " << context_lost_in() << " (see its failure)";
  }
};

struct Sm100Config {
  int block_n;
  Schedule schedule;
  int cta_group = 2;  // 2: the pair tiles (cases 1-6), 1: single-CTA tiles (cases 7, 8)
  int cta_rows = 128;  // rows a CTA: 128, or 64 (case 8)
  bool swap_ab = false;  // the swapped tiles (case 9)
};
constexpr Sm100Config kAllConfigs[] = {{256, Schedule::cluster_launch_control},
                                       {256, Schedule::persistent},
                                       {128, Schedule::cluster_launch_control},
                                       {128, Schedule::persistent}};

std::string label(const Sm100Config& c) {
  return "block_n=" + std::to_string(c.block_n) +
         (c.schedule == Schedule::cluster_launch_control ? " cluster launch control" : " persistent") +
         (c.cta_group == 1 ? " single-CTA" : "") + (c.cta_rows != 128 ? " 64-row" : "") +
         (c.swap_ab ? " swapped" : "");
}

// tcgemm::gemm with the configuration forced, then a wait for the kernel
// that gives up after the watchdog's time: the process ends with the case
// named (a hung kernel cannot be stopped otherwise; the driver stops it when
// the process ends). A CUDA error (a trapped barrier wait, a fault) throws.
Plan run_watched(const GemmArgs& args, const Sm100Config& config, const std::string& what) {
  Options o;
  o.prefer = Prefer::tcgemm_only;
  o.block_n = config.block_n;
  o.schedule = config.schedule;
  o.cluster_m = config.cta_group;  // the pair tiles even where M <= 128 would pick single-CTA ones
  o.block_m = config.cta_rows * config.cta_group;  // and the height: M <= 64 would pick 64 rows
  o.swap_ab = config.swap_ab;
  cudaEvent_t done = nullptr;
  check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
  const Plan p = gemm(args, o);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(watchdog_seconds());
  cudaError_t err = cudaEventRecord(done, args.stream);
  while (err == cudaSuccess) {
    err = cudaEventQuery(done);
    if (err == cudaErrorNotReady) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr,
                     "\n%s: HANG: %s (kernel %s) did not finish within %d s. Ending the process: a hung kernel "
                     "cannot be stopped otherwise. A -DTCGEMM_DEBUG_HANGS=ON build names the stuck barrier.\n",
                     current_test().c_str(), what.c_str(), p.kernel.c_str(), watchdog_seconds());
        std::fflush(stderr);
        std::_Exit(3);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      err = cudaSuccess;
    } else if (err == cudaSuccess) {
      break;
    }
  }
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err != cudaSuccess) context_lost_in() = current_test();
  check_cuda(err, "tcgemm::gemm " + what + " (kernel " + p.kernel + ")");
  cudaEventDestroy(done);
  return p;
}

// One case in one configuration against the reference GEMM: bit for bit
// with integer inputs, within the element-wise bound otherwise. C is filled
// afresh (beta != 0) or poisoned (beta == 0) for every run.
void check_case(const GemmCase& gc, const Sm100Config& config, uint64_t c_seed = 0) {
  const std::string what = gc.describe() + " " + label(config);
  SCOPED_TRACE(what);
  Problem prob(gc);
  if (gc.beta != 0.0f) prob.fill_outputs(gc.fill, c_seed);
  TCGEMM_ASSERT_OK(run_reference(prob.args(prob.c_ref())), "reference " + what);
  const Plan p = run_watched(prob.args(prob.c()), config, what);
  TCGEMM_ASSERT_OK(p, what);
  EXPECT_EQ(p.backend, Backend::sm100) << p.reason;
  EXPECT_NE(p.kernel.find(std::string(",") + std::to_string(config.cta_rows * config.cta_group) + "x" +
                          std::to_string(config.block_n) + "x"),
            std::string::npos)
      << p.kernel;
  EXPECT_NE(p.kernel.find(config.schedule == Schedule::cluster_launch_control ? "cluster launch control"
                                                                              : "persistent"),
            std::string::npos)
      << p.kernel;
  expect_correct(prob, p, what);
}

struct Shape {
  int64_t m, n, k;
  const char* why;
};

// 1. Whole TMA boxes outside the tensor. Tile rows: 256 (CTA 0 rows 0-127,
// CTA 1 rows 128-255); B columns: block_n, CTA r loading [r, r+1) * block_n/2.
// MN-major operands are loaded in 64-wide panels, which can lie outside on
// their own.
TEST_F(Sm100FirstRun, WhollyOutOfBoundsBoxesStillCompleteTheBarrier) {
  const Shape shapes[] = {
      {64, 256, 128, "M <= 128: CTA 1's A box is wholly outside (MN-major A: CTA 0's second 64-row panel too)"},
      {128, 256, 72, "M = 128: CTA 1's A box starts at M; K ends inside a k-block"},
      {300, 300, 200, "last m-block: CTA 1's rows 384-511 wholly outside; block_n 256: CTA 1's B half 384-511 too"},
      {256, 60, 136, "N = 60: CTA 1's B half is wholly outside for both widths"},
      {200, 150, 64, "N = 150, block_n 256: CTA 1's second 64-wide B panel (192-255) is wholly outside"},
  };
  uint64_t seed = 61000;
  for (const Shape& s : shapes)
    for (const Layout& layout : kLayouts)
      for (const Sm100Config& config : kAllConfigs) {
        SCOPED_TRACE(s.why);
        check_case(make_case(DType::f16, layout, s.m, s.n, s.k, Fill::small_int, ++seed), config);
      }
  // bf16 once per layout: the same boxes with the other element type.
  for (const Layout& layout : kLayouts)
    check_case(make_case(DType::bf16, layout, 300, 60, 200, Fill::small_int, ++seed), kAllConfigs[0]);
}

// 2. One tile: the grid is one cluster, whose scheduler's first try_cancel
// fails, so every role stops at the first response.
TEST_F(Sm100FirstRun, SingleTileClcLaunchWhoseFirstCancelFails) {
  const Shape shapes[] = {{256, 256, 256, "one full tile"}, {200, 128, 64, "one partial tile"}, {1, 8, 8, "1 x 8 x 8"}};
  uint64_t seed = 62000;
  for (const Shape& s : shapes)
    for (const Sm100Config& config : {kAllConfigs[0], kAllConfigs[2]}) {
      if (s.n > config.block_n) continue;
      SCOPED_TRACE(s.why);
      const GemmCase gc = make_case(DType::f16, kLayouts[1], s.m, s.n, s.k, Fill::small_int, ++seed);
      check_case(gc, config);
      Problem prob(gc);
      const Plan p = run_watched(prob.args(prob.c()), config, gc.describe() + " " + label(config));
      EXPECT_EQ(p.grid_ctas, 2) << "a single-tile launch is one 2-CTA cluster; " << p.kernel;
    }
}

// 3. Many more tiles than clusters fit at once: the resident clusters cancel
// the rest, each reading several responses, so both CLC slots are reused and
// their barriers' phase wraps. The persistent schedule must give the same bits.
TEST_F(Sm100FirstRun, ClcResponseSlotsWrapTheirPhase) {
  const int resident_clusters = device_sm_count() / 2;
  uint64_t seed = 63000;
  for (const int block_n : {256, 128}) {
    constexpr int64_t kM = 4096;  // 16 tile rows
    const int64_t tile_cols = (8 * static_cast<int64_t>(resident_clusters) + 15) / 16;
    const int64_t tiles = (kM / 256) * tile_cols;
    ASSERT_GE(tiles, 8 * static_cast<int64_t>(resident_clusters));
    const GemmCase gc =
        make_case(DType::f16, kLayouts[1], kM, tile_cols * block_n - 24, 128, Fill::small_int, ++seed);
    const Sm100Config clc{block_n, Schedule::cluster_launch_control};
    check_case(gc, clc);
    Problem prob(gc);
    const Plan p = run_watched(prob.args(prob.c()), clc, gc.describe() + " " + label(clc));
    EXPECT_EQ(p.grid_ctas, 2 * tiles) << "Cluster Launch Control launches one cluster per tile; " << p.kernel;
    const std::vector<uint16_t> by_clc = prob.download_c();
    prob.poison_c();
    run_watched(prob.args(prob.c()), {block_n, Schedule::persistent}, gc.describe() + " persistent");
    EXPECT_TRUE(by_clc == prob.download_c()) << "CLC and persistent schedules differ: " << gc.describe();
  }
}

// 4. MN-major operands (A op T: M contiguous; B op N: N contiguous), loaded
// in 64-wide panels and described with the transpose bits, on tiles with
// partial edges in M, N and K, exact and numeric.
TEST_F(Sm100FirstRun, MnMajorOperands) {
  uint64_t seed = 64000;
  for (const Layout& layout : kLayouts)
    for (const Sm100Config& config : kAllConfigs)
      for (const Fill fill : {Fill::small_int, Fill::uniform_pm1})
        for (const DType dt : {DType::f16, DType::bf16})
          check_case(make_case(dt, layout, 384, 320, 264, fill, ++seed), config);
}

// 5. block_n = 128: the instruction descriptor's N = 128 and each CTA's
// 64-column half of B (a 64-row K-major box, or one 64-wide MN-major panel).
TEST_F(Sm100FirstRun, BlockN128Descriptors) {
  uint64_t seed = 65000;
  for (const Layout& layout : kLayouts)
    for (const Sm100Config& config : {kAllConfigs[2], kAllConfigs[3]})
      for (const Fill fill : {Fill::small_int, Fill::uniform_pm1})
        check_case(make_case(DType::f16, layout, 512, 384, 320, fill, ++seed), config);
}

// 6. beta != 0: each epilogue warp loads its 32 x 64 panel of C by TMA
// (c_loaded), adds beta * C in fp32 and stores; with integer inputs and
// power-of-two scalings the result is exact. N = 203 also takes the
// element-wise store of the ragged right edge.
TEST_F(Sm100FirstRun, BetaNonZeroReadsC) {
  uint64_t seed = 66000;
  for (const Layout& layout : kLayouts)
    for (const Sm100Config& config : kAllConfigs)
      for (const int64_t n : {256, 203}) {
        GemmCase gc = make_case(DType::f16, layout, 300, n, 96, Fill::small_int, ++seed);
        gc.alpha = 0.5f;
        gc.beta = 2.0f;
        check_case(gc, config, seed + 7);
      }
  GemmCase numeric = make_case(DType::bf16, kLayouts[1], 300, 520, 777, Fill::uniform_pm1, ++seed);
  numeric.alpha = -1.0f;
  numeric.beta = 0.5f;
  for (const Sm100Config& config : kAllConfigs) check_case(numeric, config, seed + 7);
}

// Cases 7 and 8: single-CTA tiles `configs` at M = `ms`, every width, both
// layouts of B (the widths below 64 and 96 for B stored K-major only), beta
// != 0, then at 40 rows against the pair tiles: the rows must be theirs (the
// decode and prefill paths of a layer agree bit for bit).
template <size_t N>
void check_single_cta_tiles(const Sm100Config (&configs)[N], std::initializer_list<int64_t> ms, uint64_t seed) {
  auto built_for = [](const Sm100Config& c, const Layout& l) {
    return sm100_tile_builds_mn_major_b(c.block_n, c.cta_group) || l.b == Op::T;
  };
  for (const Layout& layout : kLayouts)
    for (const Sm100Config& config : configs)
      for (const int64_t m : ms) {
        if (!built_for(config, layout)) continue;
        check_case(make_case(DType::bf16, layout, m, 1000, 520, Fill::uniform_pm1, ++seed), config);
        GemmCase gc = make_case(DType::f16, layout, m, 203, 96, Fill::small_int, ++seed);
        gc.alpha = 0.5f;
        gc.beta = 2.0f;
        check_case(gc, config, seed + 7);
        // N = 173: a 96-wide tile's last panel (columns 160-191) ragged at
        // 13 columns, an odd N's last chunk element by element.
        check_case(make_case(DType::bf16, layout, m, 173, 64, Fill::small_int, ++seed), config);
      }
  for (const Layout& layout : kLayouts) {
    const GemmCase gc = make_case(DType::bf16, layout, 40, 4104, 1000, Fill::uniform_pm1, ++seed);
    Problem prob(gc);
    run_watched(prob.args(prob.c()), kAllConfigs[1], gc.describe() + " pair");
    const std::vector<uint16_t> pair = prob.download_c();
    for (const Sm100Config& config : configs) {
      if (!built_for(config, layout)) continue;
      prob.poison_c();
      run_watched(prob.args(prob.c()), config, gc.describe() + " " + label(config));
      EXPECT_TRUE(pair == prob.download_c()) << "single-CTA and pair tiles differ: " << gc.describe() << " "
                                             << label(config);
    }
  }
}

// 7. Single-CTA tiles (M <= 128, decoding): one 128 x block_n MMA per CTA.
// M = 1, 7, 64 with A K-major load only M rounded up to 8 rows of A (the
// rest of the stage's A is stale); A M-major loads whole 64-wide panels;
// 16-48 store C from registers.
TEST_F(Sm100FirstRun, SingleCtaSmallMTiles) {
  constexpr Sm100Config kSingle[] = {{16, Schedule::persistent, 1},  {32, Schedule::persistent, 1},
                                     {48, Schedule::persistent, 1},  {64, Schedule::persistent, 1},
                                     {96, Schedule::persistent, 1},  {128, Schedule::persistent, 1},
                                     {256, Schedule::persistent, 1}};
  check_single_cta_tiles(kSingle, {1, 7, 64, 128}, 67000);
}

// 8. The 64-row single-CTA tiles (M <= 64): one 64 x block_n MMA per CTA,
// its rows in lanes 32w..32w+15 of tensor memory (layout F), each epilogue
// warp storing 16 rows (a 16-row C map and panels; from registers below 64
// columns). M = 1, 7, 16, 64, and 100 (two block-rows, the second cut to 40
// rows of A).
TEST_F(Sm100FirstRun, SixtyFourRowSingleCtaTiles) {
  constexpr Sm100Config kRows64[] = {
      {8, Schedule::persistent, 1, 64},  {16, Schedule::persistent, 1, 64}, {32, Schedule::persistent, 1, 64},
      {40, Schedule::persistent, 1, 64}, {48, Schedule::persistent, 1, 64}, {64, Schedule::persistent, 1, 64},
      {96, Schedule::persistent, 1, 64}, {128, Schedule::persistent, 1, 64}, {256, Schedule::persistent, 1, 64}};
  check_single_cta_tiles(kRows64, {1, 7, 16, 64, 100}, 68000);
}

// 9. The swapped tiles: the kernel's A is the call's B (either layout: an
// MN-major one in whole 64-column panels) and its B the call's A (K-major);
// each epilogue thread holds one of C's columns, and neighbouring lanes
// trade values so that each stores two adjacent columns of one row. M from
// 1 (one token: its box cut to 8 rows, the stage's rows past them stale) to
// 521 (three or four token tiles, the last one's box cut to its 41-169
// tokens rounded up to 8; at 145 and width 144 to 8 rows, an odd row
// alone); N = 1000 (the last tile's fourth
// warp holds 8 columns of C) and 203 (an odd last column, stored alone);
// beta != 0; then the rows must be the unswapped single-CTA tile's, bit for
// bit.
TEST_F(Sm100FirstRun, SwappedTiles) {
  constexpr Sm100Config kSwapped[] = {{144, Schedule::persistent, 1, 128, true},
                                      {160, Schedule::persistent, 1, 128, true},
                                      {176, Schedule::persistent, 1, 128, true},
                                      {208, Schedule::persistent, 1, 128, true},
                                      {224, Schedule::persistent, 1, 128, true}};
  constexpr Sm100Config kUnswapped{128, Schedule::persistent, 1};
  uint64_t seed = 69000;
  for (const Layout& layout : {kLayouts[0], kLayouts[1]})  // A K-major (op_a = N); B either way
    for (const Sm100Config& config : kSwapped)
      for (const int64_t m : {1, 7, 145, 200, 300, 521}) {
        check_case(make_case(DType::bf16, layout, m, 1000, 520, Fill::uniform_pm1, ++seed), config);
        GemmCase gc = make_case(DType::f16, layout, m, 203, 96, Fill::small_int, ++seed);
        gc.alpha = 0.5f;
        gc.beta = 2.0f;
        check_case(gc, config, seed + 7);
      }
  for (const Layout& layout : {kLayouts[0], kLayouts[1]}) {
    const GemmCase gc = make_case(DType::bf16, layout, 300, 1000, 1000, Fill::uniform_pm1, ++seed);
    Problem prob(gc);
    run_watched(prob.args(prob.c()), kUnswapped, gc.describe() + " unswapped");
    const std::vector<uint16_t> unswapped = prob.download_c();
    for (const Sm100Config& config : kSwapped) {
      prob.poison_c();
      run_watched(prob.args(prob.c()), config, gc.describe() + " " + label(config));
      EXPECT_TRUE(unswapped == prob.download_c())
          << "swapped and unswapped tiles differ: " << gc.describe() << " " << label(config);
    }
  }
}

}  // namespace
}  // namespace tcgemm::test
