// The C ABI as a ctypes, Rust or Julia user meets it, on any machine (no GPU
// is needed: every call here is decided before a device is asked for). The
// other host suites check validation through check_args() and tcgemm_gemm /
// tcgemm_gemm_strided_batched; these go through all four entry points:
//   - empty calls (M, N or the batch 0) succeed with every pointer null, and
//     leave tcgemm_last_error() as it was, whatever the entry point;
//   - the epilogue's and the M-grouped call's own parameters reach
//     validation in their own fields (a parameter passed in the wrong slot
//     would be quoted back wrongly), and out-of-range enums are named;
//   - sizes, leading dimensions and strides at the ends of int64_t are
//     refused with a reason, never wrapped;
//   - tcgemm_last_error() is the calling thread's own, also with many
//     threads failing at once;
//   - without a device, every valid non-empty call says so (no crash, no
//     success).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"
#include "host_support.hpp"

namespace tcgemm {
namespace {

using tcgemm::test::contains;

// Never dereferenced: each call here stops in validation (or, empty, before
// anything is read). 256-byte aligned and far apart, so that no overlap check
// fires unless a test puts one pointer inside another's matrix on purpose.
const void* const kA = reinterpret_cast<const void*>(uintptr_t{0x7f0000100000});
const void* const kB = reinterpret_cast<const void*>(uintptr_t{0x7f0010000000});
void* const kC = reinterpret_cast<void*>(uintptr_t{0x7f0020000000});
const void* const kBias = reinterpret_cast<const void*>(uintptr_t{0x7f0030000000});
const int32_t* const kEnds = reinterpret_cast<const int32_t*>(uintptr_t{0x7f0040000000});

constexpr int kOk = static_cast<int>(Status::ok);
constexpr int kInvalid = static_cast<int>(Status::invalid_argument);

// A failure whose reason is known, so that a later call can be seen to leave it.
std::string set_known_error() {
  EXPECT_EQ(tcgemm_gemm(9, 0, 0, 8, 8, 8, 1.0f, kA, 8, kB, 8, 0.0f, kC, 8, nullptr), kInvalid);
  const std::string reason = tcgemm_last_error();
  EXPECT_TRUE(contains(reason, "unknown dtype 9")) << reason;
  return reason;
}

using tcgemm::test::no_cuda_device;

// ---------------------------------------------------------------------------
// Empty calls
// ---------------------------------------------------------------------------

// tcgemm.h: "M == 0 or N == 0 -> nothing to do, success"; "batch 0 writes
// nothing". Nothing is read or written, so every pointer may be null, and a
// success leaves the last reason as it was. This holds with or without a GPU
// (nothing is launched, so no device is needed).
TEST(CAbiEntryPoints, EmptyCallsSucceedThroughEveryEntryPointWithNullPointers) {
  const std::string known = set_known_error();
  struct Empty {
    const char* what;
    int rc;
  };
  // (N = 0: B is K x 0 and C M x 0, whose rows still need a leading dimension of at least 1.)
  const Empty calls[] = {
      {"tcgemm_gemm M=0", tcgemm_gemm(0, 0, 0, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 64, 0.5f, nullptr, 64, nullptr)},
      {"tcgemm_gemm N=0", tcgemm_gemm(1, 1, 1, 64, 0, 32, 1.0f, nullptr, 64, nullptr, 32, 0.0f, nullptr, 1, nullptr)},
      {"tcgemm_gemm_epilogue M=0, relu, fp32 bias",
       tcgemm_gemm_epilogue(0, 0, 1, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 32, 0.0f, nullptr, 64, nullptr, 1, 1,
                            nullptr)},
      {"tcgemm_gemm_epilogue N=0, gelu, bias given",
       tcgemm_gemm_epilogue(1, 0, 0, 16, 0, 32, 1.0f, nullptr, 32, nullptr, 1, 1.0f, nullptr, 1, kBias, 0, 2,
                            nullptr)},
      {"tcgemm_gemm_strided_batched batch=0",
       tcgemm_gemm_strided_batched(0, 0, 0, 64, 64, 32, 1.0f, nullptr, 32, 2048, nullptr, 64, 2048, 1.0f, nullptr, 64,
                                   4096, 0, nullptr)},
      {"tcgemm_gemm_strided_batched M=0, batch=3",
       tcgemm_gemm_strided_batched(1, 1, 0, 0, 64, 32, 1.0f, nullptr, 1, 32, nullptr, 64, 2048, 0.0f, nullptr, 64, 0,
                                   3, nullptr)},
      {"tcgemm_gemm_m_grouped M=0 (no rows: group_ends not read, may be null)",
       tcgemm_gemm_m_grouped(0, 1, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 32, 2048, 0.0f, nullptr, 64, nullptr, 4,
                             nullptr)},
      {"tcgemm_gemm_m_grouped N=0",
       tcgemm_gemm_m_grouped(1, 0, 40, 0, 32, 1.0f, nullptr, 32, nullptr, 1, 0, 0.0f, nullptr, 1, nullptr, 2,
                             nullptr)},
  };
  for (const Empty& call : calls) {
    EXPECT_EQ(call.rc, kOk) << call.what << ": " << tcgemm_last_error();
    EXPECT_EQ(std::string(tcgemm_last_error()), known) << call.what << " changed the last reason";
  }
  // The C++ API says what it would do: nothing, no backend, no kernel.
  GemmArgs g;
  g.m = 0;
  g.n = 64;
  g.k = 32;
  g.lda = 32;
  g.ldb = 64;
  g.ldc = 64;
  g.groups = 4;
  for (const Plan& p : {plan(g), gemm(g)}) {
    EXPECT_EQ(p.status, Status::ok) << p.reason;
    EXPECT_EQ(p.path, Path::none) << p.reason;
    EXPECT_EQ(p.backend, Backend::none) << p.reason;
  }
}

// An empty call is still a call: its arguments must be well formed. A
// negative size, a bad enum or a leading dimension below 1 is refused even
// where nothing would be computed (a caller's bug shows at once, not only on
// the day its sizes stop being 0).
TEST(CAbiEntryPoints, EmptyCallsStillRefuseMalformedArguments) {
  EXPECT_EQ(tcgemm_gemm(0, 0, 0, 0, -1, 32, 1.0f, nullptr, 32, nullptr, 64, 0.0f, nullptr, 64, nullptr), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "negative")) << tcgemm_last_error();
  EXPECT_EQ(tcgemm_gemm(2, 0, 0, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 64, 0.0f, nullptr, 64, nullptr), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "unknown dtype 2")) << tcgemm_last_error();
  EXPECT_EQ(tcgemm_gemm(0, 0, 0, 64, 0, 32, 1.0f, nullptr, 32, nullptr, 0, 0.0f, nullptr, 1, nullptr), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "ldb=0")) << tcgemm_last_error();
  EXPECT_EQ(tcgemm_gemm_strided_batched(0, 0, 0, 64, 64, 32, 1.0f, nullptr, 32, 0, nullptr, 64, 0, 0.0f, nullptr, 64,
                                        0, -1, nullptr),
            kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "batch must not be negative, not -1")) << tcgemm_last_error();
  EXPECT_EQ(tcgemm_gemm_epilogue(0, 0, 0, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 64, 0.0f, nullptr, 64, nullptr, 0, 5,
                                 nullptr),
            kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "unknown activation 5")) << tcgemm_last_error();
  // tcgemm.h: 1 <= groups <= 256, also for an empty M-grouped call.
  EXPECT_EQ(tcgemm_gemm_m_grouped(0, 0, 0, 64, 32, 1.0f, nullptr, 32, nullptr, 64, 0, 0.0f, nullptr, 64, nullptr, 0,
                                  nullptr),
            kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "needs 1 to 256 groups, not 0")) << tcgemm_last_error();
  // (and names the whole case, as every other refusal does)
  EXPECT_TRUE(contains(tcgemm_last_error(), "m=0 n=64 k=32 dtype=f16 layout=NN lda=32 ldb=64 ldc=64 groups=0"))
      << tcgemm_last_error();
}

// ---------------------------------------------------------------------------
// Each entry point's own parameters, and enums out of range
// ---------------------------------------------------------------------------

// tcgemm_gemm_epilogue: bias_type and activation are ints in the ABI; out of
// range they are named, a bias not on its elements is refused, a bias inside
// C is refused, and a call refused for another reason quotes the epilogue
// back (" bias=f32 activation=gelu_tanh": the parameters landed in their
// fields, not swapped).
TEST(CAbiEntryPoints, EpilogueParametersAreCheckedInTheirOwnFields) {
  const auto call = [](const void* bias, int bias_type, int activation, int64_t ldc = 256) {
    return tcgemm_gemm_epilogue(1, 0, 1, 128, 256, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, ldc, bias, bias_type,
                                activation, nullptr);
  };
  for (const int activation : {5, -1, 1000}) {
    EXPECT_EQ(call(kBias, 0, activation), kInvalid);
    EXPECT_TRUE(contains(tcgemm_last_error(), "unknown activation " + std::to_string(activation)))
        << tcgemm_last_error();
  }
  for (const int bias_type : {2, -1}) {
    EXPECT_EQ(call(kBias, bias_type, 0), kInvalid);
    EXPECT_TRUE(contains(tcgemm_last_error(), "unknown bias_type " + std::to_string(bias_type)))
        << tcgemm_last_error();
  }
  const char* bias_bytes = static_cast<const char*>(kBias);
  EXPECT_EQ(call(bias_bytes + 1, 0, 1), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "bias is not aligned to its 2-byte elements")) << tcgemm_last_error();
  EXPECT_EQ(call(bias_bytes + 2, 1, 1), kInvalid);  // fp32 elements: 4 bytes
  EXPECT_TRUE(contains(tcgemm_last_error(), "bias is not aligned to its 4-byte elements")) << tcgemm_last_error();
  // The bias as C's fourth row: read by every tile while others store C.
  EXPECT_EQ(call(static_cast<const char*>(kC) + 3 * 256 * 2, 0, 0), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "C overlaps the bias")) << tcgemm_last_error();
  // Refused for its ldc, the call's epilogue quoted back.
  EXPECT_EQ(call(kBias, 1, 3, 255), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "ldc=255")) << tcgemm_last_error();
  EXPECT_TRUE(contains(tcgemm_last_error(), "layout=NT lda=64 ldb=64 ldc=255 bias=f32 activation=gelu_tanh"))
      << tcgemm_last_error();
}

// tcgemm_gemm_m_grouped: op_a is always N (A K-major), its op_b, stride_b,
// group_ends and groups each land where they belong, and each has its
// refusal.
TEST(CAbiEntryPoints, MGroupedParametersAreCheckedInTheirOwnFields) {
  const auto call = [](int op_b, int64_t ldb, int64_t stride_b, const int32_t* ends, int64_t groups,
                       int64_t lda = 64) {
    // 200 rows in groups, K = 64, N = 96; B of each group K x N (op_b 0) or N x K (op_b 1).
    return tcgemm_gemm_m_grouped(0, op_b, 200, 96, 64, 1.0f, kA, lda, kB, ldb, stride_b, 0.0f, kC, 96, ends, groups,
                                 nullptr);
  };
  // Each refusal and its reason, read right after its own call.
  const struct {
    const char* says;
    int op_b;
    int64_t ldb, stride_b;
    const int32_t* ends;
    int64_t groups, lda;
  } cases[] = {
      {"at most 256 groups, not 257", 1, 64, 96 * 64, kEnds, 257, 64},
      {"groups must not be negative, not -3", 1, 64, 96 * 64, kEnds, -3, 64},
      {"needs 1 to 256 groups, not 0", 1, 64, 96 * 64, kEnds, 0, 64},
      {"unknown op_b 2", 2, 64, 96 * 64, kEnds, 4, 64},
      {"stride_b must not be negative", 1, 64, -8, kEnds, 4, 64},
      {"overflows 64-bit byte offsets", 1, 64, int64_t{1} << 61, kEnds, 4, 64},
      {"group_ends is a null pointer", 1, 64, 96 * 64, nullptr, 4, 64},
      {"group_ends is not aligned to its 4-byte (int32) elements", 1, 64, 96 * 64,
       reinterpret_cast<const int32_t*>(reinterpret_cast<uintptr_t>(kEnds) + 2), 4, 64},
      // The ends inside C (row 10 of its 200): read by every tile while others store C.
      {"C overlaps group_ends", 1, 64, 96 * 64,
       reinterpret_cast<const int32_t*>(static_cast<const char*>(kC) + 96 * 2 * 10), 4, 64},
      // A is M x K, K-major: lda >= K (op_a is N whatever the caller has in mind).
      {"lda=63 is smaller than the row length 64 of A (op_a=N: M x K)", 1, 64, 96 * 64, kEnds, 4, 63},
      // B stored N x K for op_b 1 (ldb >= K), K x N for op_b 0 (ldb >= N).
      {"ldb=63 is smaller than the row length 64 of B (op_b=T: N x K)", 1, 63, 96 * 64, kEnds, 4, 64},
      {"ldb=64 is smaller than the row length 96 of B (op_b=N: K x N)", 0, 64, 96 * 64, kEnds, 4, 64},
  };
  for (const auto& c : cases) {
    ASSERT_EQ(call(c.op_b, c.ldb, c.stride_b, c.ends, c.groups, c.lda), kInvalid) << c.says;
    EXPECT_TRUE(contains(tcgemm_last_error(), c.says)) << c.says << ": " << tcgemm_last_error();
  }
  // Quoted back: the layout is N with the caller's op_b, and groups and stride_b are the caller's.
  ASSERT_EQ(call(1, 63, 1234, kEnds, 7), kInvalid);
  EXPECT_TRUE(contains(tcgemm_last_error(), "m=200 n=96 k=64 dtype=f16 layout=NT lda=64 ldb=63 ldc=96"))
      << tcgemm_last_error();
  EXPECT_TRUE(contains(tcgemm_last_error(), "groups=7 stride_b=1234")) << tcgemm_last_error();
}

// Enum values out of range through every entry point: each is refused with
// its name and value (never read as the nearest valid one), also at the
// ends of int.
TEST(CAbiEntryPoints, OutOfRangeEnumsAreNamedByEveryEntryPoint) {
  constexpr int kBig = std::numeric_limits<int>::max(), kSmall = std::numeric_limits<int>::min();
  for (const int bad : {2, -1, kBig, kSmall}) {
    const std::string value = std::to_string(bad);
    // (Activations run 0 to 4: 2 is gelu, so 5 stands in for it there.)
    const int bad_act = bad == 2 ? 5 : bad;
    struct Call {
      const char* entry;
      const char* field;
      int rc;
    };
    const Call calls[] = {
        {"tcgemm_gemm", "dtype",
         tcgemm_gemm(bad, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)},
        {"tcgemm_gemm", "op_a", tcgemm_gemm(0, bad, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)},
        {"tcgemm_gemm", "op_b", tcgemm_gemm(0, 0, bad, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)},
        {"tcgemm_gemm_epilogue", "dtype",
         tcgemm_gemm_epilogue(bad, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias, 0, 1, nullptr)},
        {"tcgemm_gemm_epilogue", "op_b",
         tcgemm_gemm_epilogue(0, 0, bad, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias, 0, 1, nullptr)},
        {"tcgemm_gemm_epilogue", "activation",
         tcgemm_gemm_epilogue(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias, 0, bad_act, nullptr)},
        {"tcgemm_gemm_epilogue", "bias_type",
         tcgemm_gemm_epilogue(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias, bad, 0, nullptr)},
        {"tcgemm_gemm_strided_batched", "op_a",
         tcgemm_gemm_strided_batched(0, bad, 0, 64, 64, 64, 1.0f, kA, 64, 4096, kB, 64, 4096, 0.0f, kC, 64, 4096, 3,
                                     nullptr)},
        {"tcgemm_gemm_m_grouped", "dtype",
         tcgemm_gemm_m_grouped(bad, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 4096, 0.0f, kC, 64, kEnds, 2, nullptr)},
        {"tcgemm_gemm_m_grouped", "op_b",
         tcgemm_gemm_m_grouped(0, bad, 64, 64, 64, 1.0f, kA, 64, kB, 64, 4096, 0.0f, kC, 64, kEnds, 2, nullptr)},
    };
    for (const Call& c : calls)
      EXPECT_EQ(c.rc, kInvalid) << c.entry << " " << c.field << " out of range (" << value << ")";
    // The reasons, each right after its own call.
    const auto reason_of = [](int rc) {
      EXPECT_EQ(rc, kInvalid);
      return std::string(tcgemm_last_error());
    };
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm(bad, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)),
                         "unknown dtype " + value));
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm(0, bad, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)),
                         "unknown op_a " + value));
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm(0, 0, bad, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr)),
                         "unknown op_b " + value));
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm_epilogue(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias,
                                                        0, bad_act, nullptr)),
                         "unknown activation " + std::to_string(bad_act)));
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm_epilogue(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, kBias,
                                                        bad, 0, nullptr)),
                         "unknown bias_type " + value));
    EXPECT_TRUE(contains(reason_of(tcgemm_gemm_m_grouped(0, bad, 64, 64, 64, 1.0f, kA, 64, kB, 64, 4096, 0.0f, kC, 64,
                                                         kEnds, 2, nullptr)),
                         "unknown op_b " + value));
  }
}

// Sizes, leading dimensions and strides at the ends of int64_t: refused with
// a reason, never wrapped into a small (or negative) offset that would then
// be launched.
TEST(CAbiEntryPoints, ExtremeSizesLeadingDimensionsAndStridesAreRefused) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const auto reason_of = [](int rc) {
    EXPECT_EQ(rc, kInvalid);
    return std::string(tcgemm_last_error());
  };
  std::string r = reason_of(tcgemm_gemm(0, 0, 0, kMax, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr));
  EXPECT_TRUE(contains(r, "sizes above 2^31-1 are not supported")) << r;
  r = reason_of(tcgemm_gemm(0, 0, 0, 64, kMin, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr));
  EXPECT_TRUE(contains(r, "sizes must not be negative")) << r;
  // Two rows kMax apart: the second row's byte offset does not fit 64 bits.
  r = reason_of(tcgemm_gemm(0, 0, 0, 2, 64, 64, 1.0f, kA, kMax, kB, 64, 0.0f, kC, 64, nullptr));
  EXPECT_TRUE(contains(r, "A's rows x leading dimension overflows 64-bit byte offsets")) << r;
  r = reason_of(tcgemm_gemm(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, kMin, nullptr));
  EXPECT_TRUE(contains(r, "ldc=" + std::to_string(kMin) + " is smaller than the row length 64")) << r;
  r = reason_of(tcgemm_gemm_strided_batched(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, 4096, kB, 64, 4096, 0.0f, kC, 64,
                                            kMax / 2, 3, nullptr));
  EXPECT_TRUE(contains(r, "(batch - 1) x stride_c plus one matrix overflows 64-bit byte offsets")) << r;
  r = reason_of(tcgemm_gemm_strided_batched(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, 4096, kB, 64, 4096, 0.0f, kC, 64, 4096,
                                            kMax, nullptr));
  EXPECT_TRUE(contains(r, "batch above 2^31-1 is not supported")) << r;
  r = reason_of(tcgemm_gemm_strided_batched(0, 0, 0, 64, 64, 64, 1.0f, kA, 64, kMin, kB, 64, 4096, 0.0f, kC, 64, 4096,
                                            2, nullptr));
  EXPECT_TRUE(contains(r, "batch strides must not be negative")) << r;
}

// ---------------------------------------------------------------------------
// tcgemm_last_error() across threads
// ---------------------------------------------------------------------------

// tcgemm.h: the reason of the last failed call "in this thread"; successful
// calls leave it unchanged, and the pointer stays valid until the next
// failing call in this thread. Sixteen threads fail at once, each with its
// own reason, a thousand times, with successful (empty) calls in between:
// each always reads its own reason, through a pointer taken before the
// other threads' failures, and a new thread starts with "".
TEST(CAbiEntryPoints, LastErrorIsEachThreadsOwnUnderConcurrentFailures) {
  constexpr int kThreads = 16, kRounds = 1000;
  std::atomic<int> ready{0};
  std::atomic<int> wrong{0};
  std::vector<std::string> first_wrong(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      if (std::strcmp(tcgemm_last_error(), "") != 0) {
        first_wrong[static_cast<size_t>(t)] = std::string("a new thread's last error is not empty: ") +
                                              tcgemm_last_error();
        ++wrong;
      }
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      // Each thread's own bad dtype: 100 + t, named in its reason.
      const std::string own = "unknown dtype " + std::to_string(100 + t);
      for (int round = 0; round < kRounds; ++round) {
        const int rc = tcgemm_gemm(100 + t, 0, 0, 64, 64, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 64, nullptr);
        const char* reason = tcgemm_last_error();
        // A success (an empty call) in between: the pointer and its text stay.
        const int empty = tcgemm_gemm(0, 0, 0, 0, 64, 64, 1.0f, nullptr, 64, nullptr, 64, 0.0f, nullptr, 64, nullptr);
        std::this_thread::yield();  // (other threads fail meanwhile)
        const std::string neighbour = "unknown dtype " + std::to_string(100 + (t + 1) % kThreads);
        const bool ok = rc == kInvalid && empty == kOk && reason == tcgemm_last_error() && contains(reason, own) &&
                        !contains(reason, neighbour);
        if (!ok && wrong++ == 0)
          first_wrong[static_cast<size_t>(t)] = "thread " + std::to_string(t) + " round " + std::to_string(round) +
                                                ": rc " + std::to_string(rc) + ", empty " + std::to_string(empty) +
                                                ", reason '" + reason + "'";
      }
    });
  }
  for (std::thread& th : threads) th.join();
  std::string why;
  for (const std::string& s : first_wrong) why += s;
  EXPECT_EQ(wrong.load(), 0) << why;
}

// ---------------------------------------------------------------------------
// Without a device
// ---------------------------------------------------------------------------

// A valid, non-empty call through each entry point on a machine with no GPU
// (CI): a status that says so and a reason, never success and never a crash;
// K == 0 (the scale, which needs no operands) included.
TEST(CAbiEntryPoints, WithoutADeviceEveryEntryPointSaysSo) {
  if (!no_cuda_device()) GTEST_SKIP() << "a CUDA device is visible; this test covers machines without one";
  const auto expect_no_device = [](int rc, const char* what) {
    EXPECT_TRUE(rc == static_cast<int>(Status::no_device) || rc == static_cast<int>(Status::cuda_error))
        << what << ": rc " << rc << ", " << tcgemm_last_error();
    EXPECT_TRUE(contains(tcgemm_last_error(), "tcgemm:")) << what << ": " << tcgemm_last_error();
  };
  expect_no_device(tcgemm_gemm(1, 0, 1, 128, 256, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 256, nullptr), "tcgemm_gemm");
  expect_no_device(tcgemm_gemm(1, 0, 1, 128, 256, 0, 1.0f, nullptr, 1, nullptr, 1, 2.0f, kC, 256, nullptr),
                   "tcgemm_gemm K=0");
  expect_no_device(tcgemm_gemm_epilogue(0, 0, 1, 128, 256, 64, 1.0f, kA, 64, kB, 64, 0.0f, kC, 256, kBias, 1, 4,
                                        nullptr),
                   "tcgemm_gemm_epilogue");
  expect_no_device(tcgemm_gemm_m_grouped(1, 1, 128, 256, 64, 1.0f, kA, 64, kB, 64, 256 * 64, 0.0f, kC, 256, kEnds, 8,
                                         nullptr),
                   "tcgemm_gemm_m_grouped");
  // The C++ API's reference GEMM too.
  GemmArgs g;
  g.m = 128;
  g.n = 256;
  g.k = 64;
  g.a = kA;
  g.lda = 64;
  g.b = kB;
  g.ldb = 256;
  g.c = kC;
  g.ldc = 256;
  g.bias = kBias;
  g.activation = Activation::silu;
  const Plan r = reference_gemm(g);
  EXPECT_TRUE(r.status == Status::no_device || r.status == Status::cuda_error) << to_string(r.status) << ": "
                                                                                << r.reason;
}

}  // namespace
}  // namespace tcgemm
