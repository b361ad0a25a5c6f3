// Hang diagnostics: in a -DTCGEMM_DEBUG_HANGS=ON build every barrier wait is
// bounded, and an expired one reports the waiting role, the barrier, its
// stage and phase, the block and thread, and traps. This provokes one: the
// `tcgemm` tool runs a GEMM in a child process with TCGEMM_DEBUG_BREAK_BARRIER
// set, which makes the kernel's first ring barrier wait for an arrival that
// never comes. The child must end (not hang), fail, and print the report.
// (A trap ends the child's CUDA context; the test's own stays clean.)
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <string>

#include "gemm_case.hpp"

namespace tcgemm::test {
namespace {

class Hang : public GpuTest {};

TEST_F(Hang, ABrokenBarrierIsReportedNotHung) {
#if !defined(TCGEMM_DEBUG_HANGS) || !defined(TCGEMM_CLI_PATH)
  GTEST_SKIP() << "needs a -DTCGEMM_DEBUG_HANGS=ON build with the tools";
#else
  const std::string cmd = std::string("TCGEMM_DEBUG_BREAK_BARRIER=1 timeout 300 '") + TCGEMM_CLI_PATH +
                          "' check --case 'm=256 n=256 k=128 f16 NN' 2>&1";
  int status = 0;
  const std::string output = run_child(cmd, &status);
  ASSERT_NE(status, -1) << cmd;
  SCOPED_TRACE(cmd + "\n" + output);
  EXPECT_NE(status, 0) << "the broken GEMM must fail";
  EXPECT_EQ(WEXITSTATUS(status) == 124, false) << "the child hung until `timeout` killed it";
  EXPECT_NE(output.find("tcgemm: hang: "), std::string::npos) << "no hang report";
  bool names_role = false;
  for (const char* role : {"producer", "consumer", "scheduler", "MMA", "epilogue"})
    names_role |= output.find(std::string("tcgemm: hang: ") + role + " waited ") != std::string::npos;
  EXPECT_TRUE(names_role) << "the report names the waiting role";
  EXPECT_NE(output.find("for barrier smem_full["), std::string::npos) << "the report names the barrier";
  EXPECT_NE(output.find("(phase 0)"), std::string::npos) << "the report names the phase";
  EXPECT_NE(output.find("block "), std::string::npos) << "the report names the block";
#endif
}

}  // namespace
}  // namespace tcgemm::test
