// Counted tiles (Schedule::counted, sm_90): the tiles taken in order from a
// counter give the same bits as the static persistent schedule on every
// tile that can count (cooperative and ping-pong 128-row tiles, batched and
// plain, fewer tiles than SMs so that some CTAs take none, K whose stages
// fill the ring exactly), call after call on one stream (the counter is
// left zero for the next kernel, PDL or not), on several streams from
// several threads at once (a counter per stream, the per-thread default
// streams included), and replayed from CUDA
// graphs, twice per graph and beside eager calls (a counter per capture).
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gemm_case.hpp"
#include "sm90/sm90_config.hpp"
#include "support/device_buffer.hpp"
#include "support/fill.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::test {
namespace {

class Counted : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (!IsSkipped() && own_backend() != Backend::sm90) GTEST_SKIP() << "counted tiles are sm_90's";
  }
};

// One call's operands (a batch of NN or NT problems, packed) and two
// outputs: the counted call's and the persistent one's.
struct Case {
  int64_t m, n, k, batch;
  Op op_b;
  int block_n;
  bool pingpong;
  std::string describe() const {
    return std::to_string(batch) + " x " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
           (op_b == Op::T ? " NT" : " NN") + " block_n=" + std::to_string(block_n) + (pingpong ? " ping-pong" : "");
  }
};

class Operands {
 public:
  explicit Operands(const Case& c, uint64_t seed) : c_(c) {
    a_ = Buffer(static_cast<size_t>(c.m * c.k * c.batch));
    b_ = Buffer(static_cast<size_t>(c.k * c.n * c.batch));
    support::fill_random(DType::bf16, a_.data(), static_cast<int64_t>(a_.size()), support::uniform(-1, 1), seed);
    support::fill_random(DType::bf16, b_.data(), static_cast<int64_t>(b_.size()), support::uniform(-1, 1), seed + 1);
  }
  size_t c_elems() const { return static_cast<size_t>(c_.m * c_.n * c_.batch); }

  // The call writing `c` on `stream` with `schedule`.
  GemmArgs args(uint16_t* c, cudaStream_t stream) const {
    GemmArgs g;
    g.dtype = DType::bf16;
    g.op_a = Op::N;
    g.op_b = c_.op_b;
    g.m = c_.m;
    g.n = c_.n;
    g.k = c_.k;
    g.a = a_.data();
    g.lda = c_.k;
    g.b = b_.data();
    g.ldb = c_.op_b == Op::T ? c_.k : c_.n;
    g.c = c;
    g.ldc = c_.n;
    g.stream = stream;
    g.batch = c_.batch;
    g.stride_a = c_.m * c_.k;
    g.stride_b = c_.k * c_.n;
    g.stride_c = c_.m * c_.n;
    return g;
  }
  Options options(Schedule schedule) const {
    Options o;
    o.prefer = Prefer::tcgemm_only;
    o.block_n = c_.block_n;
    o.cluster_m = 1;
    o.pingpong = c_.pingpong;
    o.schedule = schedule;
    return o;
  }

 private:
  using Buffer = support::DeviceBuffer<uint16_t>;
  Case c_;
  Buffer a_, b_;
};

using Buffer = support::DeviceBuffer<uint16_t>;
constexpr uint16_t kNaN = 0x7FC0;  // a bf16 NaN: every element a call leaves unwritten shows

// Runs the call into a NaN-poisoned `c` and returns what it wrote.
std::vector<uint16_t> run(const Operands& ops, const Options& o, const Buffer& c, cudaStream_t stream,
                          const std::string& what, Plan* plan = nullptr) {
  support::fill_bits(c.data(), c.size(), kNaN, stream);
  const Plan p = gemm(ops.args(c.data(), stream), o);
  EXPECT_EQ(p.status, Status::ok) << what << ": " << p.reason;
  if (plan != nullptr) *plan = p;
  return support::download(c.data(), c.size(), stream);
}

// Same bits, and no NaN left (every element written).
void expect_same(const std::vector<uint16_t>& got, const std::vector<uint16_t>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t differ = 0, nan = 0, first = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if ((got[i] & 0x7FFF) > 0x7F80) ++nan;
    if (got[i] != want[i] && ++differ == 1) first = i;
  }
  EXPECT_EQ(nan, 0u) << what << ": elements left unwritten (NaN)";
  EXPECT_EQ(differ, 0u) << what << ": " << differ << " elements differ from the persistent schedule's, first at "
                        << first;
}

const Case kCases[] = {
    {512, 512, 128, 16, Op::N, 128, true},     // a store-bound batch, ping-pong
    {512, 512, 128, 16, Op::T, 128, false},    // cooperative
    {1000, 1496, 200, 3, Op::T, 128, true},    // ragged edges, a K tail
    {1000, 1496, 200, 3, Op::N, 256, false},   // the 128 x 256 tile
    {256, 256, 384, 1, Op::T, 128, true},      // 4 tiles: fewer than the SMs; K = 6 stages, a whole ring a tile
    {300, 200, 64, 1, Op::T, 128, false},      // one k-block
    {2048, 2048, 1024, 1, Op::T, 128, true},   // plain, long K
};

TEST_F(Counted, SameBitsAsPersistent) {
  for (const Case& c : kCases) {
    const Operands ops(c, 77);
    const Buffer counted(ops.c_elems()), persistent(ops.c_elems());
    Plan plan;
    const auto got = run(ops, ops.options(Schedule::counted), counted, nullptr, c.describe(), &plan);
    EXPECT_EQ(plan.config.schedule, Schedule::counted) << c.describe() << ": " << plan.kernel;
    const auto want = run(ops, ops.options(Schedule::persistent), persistent, nullptr, c.describe());
    expect_same(got, want, c.describe());
  }
}

// Automatic for the store-bound batch on a GPU whose L2 is under 56 MiB (an
// H100's 50, not an H200's 60: sm90::kCountedMaxL2Bytes).
TEST_F(Counted, AutomaticForStoreBoundBatches) {
  int device = 0, l2 = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
  const Schedule for_batch = l2 > 0 && l2 < sm90::kCountedMaxL2Bytes ? Schedule::counted : Schedule::persistent;
  const Case batch{1024, 1024, 128, 128, Op::N, 0, false};  // 8192 tiles: at least 32 an SM up to 256 SMs
  const Case plain{2048, 2048, 1024, 1, Op::T, 0, false};
  for (const auto& [c, want] : {std::pair{batch, for_batch}, std::pair{plain, Schedule::persistent}}) {
    const Operands ops(c, 5);
    const Buffer out(ops.c_elems());
    Options o;
    o.prefer = Prefer::tcgemm_only;
    const Plan p = plan(ops.args(out.data(), nullptr), o);
    EXPECT_EQ(p.config.schedule, want) << c.describe() << ": " << p.kernel;
  }
}

// Call after call on one stream, with and without PDL: each kernel finds the
// counter zero (the last CTA of the previous one reset it).
TEST_F(Counted, BackToBackOnOneStream) {
  const Case c = kCases[0];
  const Operands ops(c, 11);
  const Buffer out(ops.c_elems()), ref(ops.c_elems());
  const auto want = run(ops, ops.options(Schedule::persistent), ref, nullptr, "reference");
  for (bool pdl : {true, false}) {
    Options o = ops.options(Schedule::counted);
    o.pdl = pdl;
    support::fill_bits(out.data(), out.size(), kNaN);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(gemm(ops.args(out.data(), nullptr), o).status, Status::ok);
    expect_same(support::download(out.data(), out.size()), want, std::string("20 calls, pdl=") + (pdl ? "on" : "off"));
  }
}

// Four threads, a stream each, counted calls at once: streams they create,
// or each thread's per-thread default stream (cudaStreamPerThread, one
// handle for four streams: each must still get a counter of its own).
void expect_concurrent_threads_agree(bool per_thread_stream) {
  const Case c = kCases[0];
  const Operands ops(c, 13);
  const Buffer ref(ops.c_elems());
  const auto want = run(ops, ops.options(Schedule::persistent), ref, nullptr, "reference");
  constexpr int kThreads = 4;
  std::vector<Buffer> outs;
  for (int t = 0; t < kThreads; ++t) outs.emplace_back(ops.c_elems());
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      cudaStream_t s = cudaStreamPerThread;
      if (!per_thread_stream && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        failures[t] = "cudaStreamCreate failed";
        return;
      }
      const Options o = ops.options(Schedule::counted);
      for (int i = 0; i < 25 && failures[t].empty(); ++i) {
        support::fill_bits(outs[t].data(), outs[t].size(), kNaN, s);
        const Plan p = gemm(ops.args(outs[t].data(), s), o);
        if (p.status != Status::ok) failures[t] = p.reason;
      }
      cudaStreamSynchronize(s);
      if (!per_thread_stream) cudaStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
  const std::string streams = per_thread_stream ? "per-thread default streams" : "created streams";
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], "") << "thread " << t << ", " << streams;
    expect_same(support::download(outs[t].data(), outs[t].size()), want,
                "thread " + std::to_string(t) + ", " + streams);
  }
}

TEST_F(Counted, ConcurrentStreams) { expect_concurrent_threads_agree(false); }
TEST_F(Counted, ConcurrentPerThreadDefaultStreams) { expect_concurrent_threads_agree(true); }

// Two counted calls captured in one graph (a counter each), the graph
// replayed twice while eager counted calls run on another stream.
TEST_F(Counted, CapturedInGraphs) {
  const Case c = kCases[0];
  const Operands ops(c, 17);
  const Buffer ref(ops.c_elems()), g1(ops.c_elems()), g2(ops.c_elems()), eager(ops.c_elems());
  const auto want = run(ops, ops.options(Schedule::persistent), ref, nullptr, "reference");
  cudaStream_t cap = nullptr, other = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
  const Options o = ops.options(Schedule::counted);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
  const Plan p1 = gemm(ops.args(g1.data(), cap), o);
  const Plan p2 = gemm(ops.args(g2.data(), cap), o);
  ASSERT_EQ(cudaStreamEndCapture(cap, &graph), cudaSuccess);
  ASSERT_EQ(p1.status, Status::ok) << p1.reason;
  ASSERT_EQ(p2.status, Status::ok) << p2.reason;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) {
    support::fill_bits(g1.data(), g1.size(), kNaN, cap);
    support::fill_bits(g2.data(), g2.size(), kNaN, cap);
    ASSERT_EQ(cudaGraphLaunch(exec, cap), cudaSuccess);
    for (int i = 0; i < 5; ++i) ASSERT_EQ(gemm(ops.args(eager.data(), other), o).status, Status::ok);
    ASSERT_EQ(cudaStreamSynchronize(cap), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(other), cudaSuccess);
    const std::string r = " (replay " + std::to_string(replay) + ")";
    expect_same(support::download(g1.data(), g1.size()), want, "graph's first call" + r);
    expect_same(support::download(g2.data(), g2.size()), want, "graph's second call" + r);
    expect_same(support::download(eager.data(), eager.size()), want, "eager calls beside the graph" + r);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(cap);
  cudaStreamDestroy(other);
}

// The first counted call of a process, made under a global-mode capture:
// the counter pool's module is first used then (cudaGetSymbolAddress, which
// may load it), which must neither fail nor invalidate the capture. It runs
// in a child: this test program again, with this test alone.
TEST_F(Counted, FirstCallOfAProcessCapturedInGlobalMode) {
  constexpr const char* kChild = "TCGEMM_TEST_FIRST_CALL_CAPTURED";
  if (std::getenv(kChild) == nullptr) {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const std::string cmd = std::string(kChild) + "=1 timeout 300 '" + self +
                            "' --gtest_filter=Counted.FirstCallOfAProcessCapturedInGlobalMode 2>&1";
    int status = 0;
    const std::string output = run_child(cmd, &status);
    EXPECT_EQ(status, 0) << cmd << "\n" << output;
    EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << cmd << "\n" << output;
    return;
  }
  const Case c = kCases[0];
  const Operands ops(c, 23);
  const Buffer captured(ops.c_elems()), ref(ops.c_elems());
  cudaStream_t cap = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking), cudaSuccess);
  support::fill_bits(captured.data(), captured.size(), kNaN, cap);
  ASSERT_EQ(cudaStreamSynchronize(cap), cudaSuccess);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(cap, cudaStreamCaptureModeGlobal), cudaSuccess);
  const Plan p = gemm(ops.args(captured.data(), cap), ops.options(Schedule::counted));
  ASSERT_EQ(cudaStreamEndCapture(cap, &graph), cudaSuccess) << "the first counted call invalidated the capture";
  ASSERT_EQ(p.status, Status::ok) << p.reason;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, cap), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(cap), cudaSuccess);
  const auto want = run(ops, ops.options(Schedule::persistent), ref, nullptr, "reference");
  expect_same(support::download(captured.data(), captured.size()), want, "the captured first call");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(cap);
}

}  // namespace
}  // namespace tcgemm::test
