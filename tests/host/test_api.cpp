// The public API on any machine: names, build information, rejection of bad
// arguments through the C++ and C entry points, and a clean failure when no
// GPU is visible (CI machines have none).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"
#include "host_support.hpp"

namespace tcgemm {
namespace {

using tcgemm::test::contains;

// Fake, never-dereferenced device pointers: only used where the call must stop
// before touching memory (validation, or no device at all).
const void* const kFakeA = reinterpret_cast<const void*>(uintptr_t{0x7f0000100000});
const void* const kFakeB = reinterpret_cast<const void*>(uintptr_t{0x7f0000200000});
void* const kFakeC = reinterpret_cast<void*>(uintptr_t{0x7f0000300000});

GemmArgs valid_args() {
  GemmArgs g;
  g.m = 128;
  g.n = 256;
  g.k = 64;
  g.a = kFakeA;
  g.lda = 64;
  g.b = kFakeB;
  g.ldb = 256;
  g.c = kFakeC;
  g.ldc = 256;
  return g;
}

using tcgemm::test::no_cuda_device;

TEST(ToString, EnumNames) {
  EXPECT_STREQ(to_string(DType::f16), "f16");
  EXPECT_STREQ(to_string(DType::bf16), "bf16");
  EXPECT_STREQ(to_string(Op::N), "N");
  EXPECT_STREQ(to_string(Op::T), "T");
  EXPECT_STREQ(to_string(Status::ok), "ok");
  EXPECT_STREQ(to_string(Status::invalid_argument), "invalid_argument");
  EXPECT_STREQ(to_string(Status::unsupported), "unsupported");
  EXPECT_STREQ(to_string(Status::no_device), "no_device");
  EXPECT_STREQ(to_string(Status::cuda_error), "cuda_error");
  EXPECT_STREQ(to_string(Backend::none), "none");
  EXPECT_STREQ(to_string(Backend::sm90), "sm90");
  EXPECT_STREQ(to_string(Backend::cublas), "cublas");
  EXPECT_STREQ(to_string(Backend::sm100), "sm100");
  EXPECT_STREQ(to_string(Path::none), "none");
  EXPECT_STREQ(to_string(Path::scale), "scale");
  EXPECT_STREQ(to_string(Path::kernel), "kernel");
  EXPECT_STREQ(to_string(Path::cublas), "cublas");
  EXPECT_STREQ(to_string(Schedule::automatic), "automatic");
  EXPECT_STREQ(to_string(Schedule::persistent), "persistent");
  EXPECT_STREQ(to_string(Schedule::cluster_launch_control), "cluster_launch_control");
}

TEST(ToString, OutOfRangeValuesGiveANonEmptyName) {
  // Never null (callers print them) and never a valid name.
  const char* names[] = {to_string(static_cast<DType>(9)), to_string(static_cast<Op>(9)),
                         to_string(static_cast<Status>(99)), to_string(static_cast<Backend>(99)),
                         to_string(static_cast<Path>(99)), to_string(static_cast<Schedule>(99))};
  for (const char* s : names) {
    ASSERT_NE(s, nullptr);
    EXPECT_GT(std::strlen(s), 0u);
    for (const char* valid : {"f16", "bf16", "N", "T", "ok", "none", "sm90", "cublas", "kernel", "persistent"})
      EXPECT_STRNE(s, valid);
  }
}

TEST(BuildInfo, MatchesTheBuild) {
  const BuildInfo info = build_info();
  ASSERT_NE(info.version, nullptr);
  ASSERT_NE(info.cuda_archs, nullptr);
  ASSERT_NE(info.kernel_families, nullptr);
  EXPECT_STREQ(info.version, TCGEMM_TEST_VERSION);
  EXPECT_STREQ(info.cuda_archs, TCGEMM_TEST_ARCHS);
  EXPECT_EQ(info.cuda_runtime_version, CUDART_VERSION);
  EXPECT_EQ(contains(info.kernel_families, "sm90"), contains(TCGEMM_TEST_ARCHS, "sm_90a")) << info.kernel_families;
  EXPECT_EQ(contains(info.kernel_families, "sm100"), contains(TCGEMM_TEST_ARCHS, "sm_100a")) << info.kernel_families;
}

// The struct layouts that TCGEMM_ABI_NAMESPACE stands for (tcgemm.hpp), as
// sizes on x86-64 Linux. A struct that gains, loses or resizes a field fails
// here: give the namespace its next number and write the new sizes below, so
// that programs built with the old headers fail to load instead of passing
// structs of the old layout.
TEST(CxxAbi, StructLayoutsAreTheOnesTheNamespaceNames) {
#define TCGEMM_TEST_STR(x) #x
#define TCGEMM_TEST_XSTR(x) TCGEMM_TEST_STR(x)
  EXPECT_STREQ(TCGEMM_TEST_XSTR(TCGEMM_ABI_NAMESPACE), "abi_1");
#undef TCGEMM_TEST_XSTR
#undef TCGEMM_TEST_STR
  EXPECT_EQ(sizeof(GemmArgs), 176u);
  EXPECT_EQ(sizeof(Options), 40u);
  EXPECT_EQ(sizeof(Plan), 120u);  // (its reason is a std::string of the C++11 ABI)
  EXPECT_EQ(sizeof(KernelConfig), 36u);
  EXPECT_EQ(sizeof(TileConfig), 24u);
  EXPECT_EQ(sizeof(Sm100TileConfig), 20u);
  EXPECT_EQ(sizeof(BuildInfo), 32u);
}

// Validation needs no device: a bad argument is reported as such everywhere.
TEST(PublicApi, RejectsBadDtypeWithoutTouchingTheDevice) {
  GemmArgs g = valid_args();
  g.dtype = static_cast<DType>(7);
  for (const Plan& p : {gemm(g), plan(g), reference_gemm(g), gemm(g, Options{Prefer::cublas_only, 0})}) {
    EXPECT_EQ(p.status, Status::invalid_argument) << to_string(p.status) << ": " << p.reason;
    EXPECT_TRUE(contains(p.reason, "unknown dtype 7")) << p.reason;
    EXPECT_TRUE(contains(p.reason, "m=128 n=256 k=64")) << "the case is appended: " << p.reason;
  }
}

TEST(PublicApi, RejectsBadLeadingDimension) {
  GemmArgs g = valid_args();
  g.ldb = 255;
  const Plan p = gemm(g);
  EXPECT_EQ(p.status, Status::invalid_argument) << p.reason;
  EXPECT_TRUE(contains(p.reason, "ldb=255")) << p.reason;
}

// An empty product needs no device: nothing runs, and the plan says so.
TEST(PublicApi, EmptyProductPlansNothing) {
  GemmArgs g = valid_args();
  g.m = 0;
  for (const Plan& p : {plan(g), gemm(g)}) {
    EXPECT_EQ(p.status, Status::ok) << p.reason;
    EXPECT_EQ(p.path, Path::none);
    EXPECT_EQ(p.backend, Backend::none);
    EXPECT_EQ(p.kernel, "none");
    EXPECT_EQ(p.reason, "M or N is 0: nothing to compute, C is untouched");
    EXPECT_EQ(p.config.block_n, 0);
  }
  const Plan r = reference_gemm(g);
  EXPECT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.kernel, "reference_gemm");
  // Options are checked before anything else, also when nothing would run.
  Options bad;
  bad.block_n = 100;
  const Plan p = plan(g, bad);
  EXPECT_EQ(p.status, Status::invalid_argument);
  // (Neither family builds it: both say why, and the case follows.)
  EXPECT_EQ(p.reason.rfind("tcgemm: no kernel family builds these Options: on sm_90, Options::block_n must be 0 "
                           "(automatic) or one of 8, 16, 32, 40, 48, 64, 96, 112, 128, 136, 144, 152, 160, 176, 192, "
                           "200, 208, 224, 256, not 100; on sm_100, Options::block_n must be 0, 8, 16",
                           0),
            0u)
      << p.reason;
  EXPECT_TRUE(contains(p.reason, "on sm_100, not 100 (m=0 n=256 k=64")) << p.reason;
}

TEST(PublicApi, NoDeviceGivesAStatusAndAReason) {
  if (!no_cuda_device()) GTEST_SKIP() << "a CUDA device is visible; this test covers machines without one";
  const GemmArgs g = valid_args();
  for (const Plan& p : {gemm(g), plan(g), reference_gemm(g)}) {
    EXPECT_TRUE(p.status == Status::no_device || p.status == Status::cuda_error)
        << "status " << to_string(p.status) << ": " << p.reason;
    EXPECT_FALSE(p.reason.empty());
  }
  const int rc = tcgemm_gemm(0, 0, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, g.c, g.ldc, nullptr);
  EXPECT_TRUE(rc == static_cast<int>(Status::no_device) || rc == static_cast<int>(Status::cuda_error)) << rc;
  EXPECT_GT(std::strlen(tcgemm_last_error()), 0u);
}

TEST(CApi, BadDtypeReturnsNonZeroAndNamesIt) {
  const GemmArgs g = valid_args();
  const int rc = tcgemm_gemm(7, 0, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, g.c, g.ldc, nullptr);
  EXPECT_EQ(rc, static_cast<int>(Status::invalid_argument));
  const char* why = tcgemm_last_error();
  ASSERT_NE(why, nullptr);
  EXPECT_TRUE(contains(why, "unknown dtype 7")) << why;
}

TEST(CApi, BadOpsAndSizesAreNamed) {
  const GemmArgs g = valid_args();
  EXPECT_NE(tcgemm_gemm(0, 2, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, g.c, g.ldc, nullptr), 0);
  EXPECT_TRUE(contains(tcgemm_last_error(), "unknown op_a 2")) << tcgemm_last_error();
  EXPECT_NE(tcgemm_gemm(0, 0, 1, g.m, -4, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, g.c, g.ldc, nullptr), 0);
  EXPECT_TRUE(contains(tcgemm_last_error(), "negative")) << tcgemm_last_error();
  EXPECT_NE(tcgemm_gemm(1, 0, 0, g.m, g.n, g.k, 1.0f, g.a, g.lda, g.b, g.ldb, 0.0f, nullptr, g.ldc, nullptr), 0);
  EXPECT_TRUE(contains(tcgemm_last_error(), "C is a null pointer")) << tcgemm_last_error();
}

}  // namespace
}  // namespace tcgemm
