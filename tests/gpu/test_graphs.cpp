// CUDA graphs: every way into the library (C++ API, C ABI; tcgemm's kernel,
// the cuBLAS fallback, cuBLAS on request, the K == 0 scale) can be captured
// in each capture mode, and the graph replays the same bits as the eager call,
// also after its inputs were rewritten in place. PyTorch's reduce-overhead
// mode and LLM serving stacks run their GEMMs this way. The rule the launch
// path follows is in src/common/host/device.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gemm_case.hpp"
#include "graph_support.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.h"

namespace tcgemm::test {
namespace {

enum class Entry { cpp_api, c_abi };
const char* to_string(Entry e) { return e == Entry::cpp_api ? "C++ API" : "C ABI"; }

// One call through `entry`. The C ABI takes no Options: those calls use the
// automatic choice.
Plan call(Entry entry, const GemmArgs& g, const Options& options = {}) {
  if (entry == Entry::cpp_api) return tcgemm::gemm(g, options);
  Plan p;
  const int rc = tcgemm_gemm(static_cast<int>(g.dtype), static_cast<int>(g.op_a), static_cast<int>(g.op_b), g.m, g.n,
                             g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, g.stream);
  p.status = static_cast<Status>(rc);
  if (rc != 0) p.reason = tcgemm_last_error();
  return p;
}

// A path through the library: a case that takes it, the options that force
// it, and the backend that must run.
struct Path {
  const char* name;
  GemmCase gc;
  Options options;
  Backend backend;
  bool c_abi = true;  // reachable through the C ABI (it takes no options)
};

std::vector<Path> paths() {
  std::vector<Path> out;
  // tcgemm's kernel, the nn.Linear layout at a decode-like M.
  GemmCase kernel = make_case(DType::bf16, kLayouts[1], 33, 1000, 520, Fill::uniform_pm1, 51000);
  kernel.beta = 0.5f;
  out.push_back({"kernel", kernel, {}, own_backend()});
  // A 2-CTA cluster configuration (TMA multicast) where the family has one.
  if (own_backend() == Backend::sm90) {
    GemmCase cluster = make_case(DType::f16, kLayouts[0], 520, 700, 300, Fill::uniform_pm1, 51001);
    cluster.beta = -1.0f;
    out.push_back({"kernel_cluster", cluster, Options{Prefer::tcgemm_only, 128, 2}, own_backend(), false});
  }
  // The cuBLAS fallback: an odd lda that TMA cannot describe.
  GemmCase fallback = make_case(DType::f16, kLayouts[2], 130, 96, 64, Fill::uniform_pm1, 51002);
  fallback.lda += 1;
  fallback.beta = 0.25f;
  out.push_back({"cublas_fallback", fallback, {}, Backend::cublas});
  // cuBLAS on request.
  GemmCase cublas = make_case(DType::bf16, kLayouts[3], 64, 256, 128, Fill::uniform_pm1, 51003);
  out.push_back({"cublas_requested", cublas, Options{Prefer::cublas_only, 0}, Backend::cublas, false});
  // K == 0: C = beta * C through the scale kernel.
  GemmCase scale = make_case(DType::f16, kLayouts[0], 70, 90, 0, Fill::uniform_pm1, 51004);
  scale.beta = -0.5f;
  out.push_back({"k0_scale", scale, {}, Backend::none});
  return out;
}

// Puts the same seeded C0 in C and the reference C, or poison where beta is
// 0 (C must then not be read, and every element written).
void reset_outputs(Problem& prob, uint64_t seed) {
  if (prob.gemm_case().beta != 0.0f)
    prob.fill_outputs(Fill::uniform_pm1, seed);
  else
    prob.poison_outputs();
}

void expect_same_bits(const Problem& prob, const std::string& what) {
  const GemmCase& gc = prob.gemm_case();
  expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
                   what);
}

class Graphs : public GpuTest {};

// Every path, entry point and capture mode: the captured call reports ok,
// runs nothing while captured, and replays the eager call's bits, also
// after A, B and C were rewritten in place.
TEST_F(Graphs, EveryPathEntryAndModeReplaysEagerBits) {
  Stream stream;
  for (const Path& path : paths()) {
    for (Entry entry : {Entry::cpp_api, Entry::c_abi}) {
      if (entry == Entry::c_abi && !path.c_abi) continue;
      for (const CaptureMode& mode : kModes) {
        const std::string what = std::string(path.name) + " via " + to_string(entry) + ", capture mode " + mode.name +
                                 ": " + path.gc.describe();
        SCOPED_TRACE(what);
        Problem prob(path.gc);
        reset_outputs(prob, 1);
        const std::vector<uint16_t> c0 = prob.download_c();

        Plan captured;
        const Graph graph = Graph::capture(stream, mode.mode, [&] {
          captured = call(entry, prob.args(prob.c(), stream), path.options);
        });
        TCGEMM_ASSERT_OK(captured, what);
        ASSERT_GT(graph.num_nodes(), 0u) << "nothing was captured";
        ASSERT_EQ(prob.download_c(), c0) << "the call ran during capture instead of being recorded";
        if (entry == Entry::cpp_api) {
          EXPECT_EQ(captured.backend, path.backend) << captured.reason;
        }

        for (uint64_t round = 0; round < 2; ++round) {
          if (round > 0) prob.refill_inputs(path.gc.seed + 1000 * round);
          reset_outputs(prob, 2 + round);
          TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c_ref(), stream), path.options), what);  // eager
          graph.replay(stream);
          expect_same_bits(prob, what + (round == 0 ? ", first replay" : ", replay after new inputs"));
        }
      }
    }
  }
}

// One graph of many calls (shapes from decode to prefill, every layout, both
// dtypes, the fallback and the K == 0 path, every built-in configuration of
// the family), replayed over inputs rewritten in place between replays.
TEST_F(Graphs, ManyCallsOfDifferentShapesReplayAfterInputsChange) {
  struct Call {
    GemmCase gc;
    Options options;
    Entry entry = Entry::cpp_api;
    const support::KernelVariant* forced = nullptr;  // the configuration options force, checked as it runs
  };
  std::vector<Call> calls;
  uint64_t seed = 52000;
  for (int64_t m : {1, 8, 33, 64})
    calls.push_back({make_case(DType::bf16, kLayouts[1], m, 2048, 1024, Fill::uniform_pm1, seed++), {},
                     m % 2 ? Entry::c_abi : Entry::cpp_api});
  for (const Layout& layout : kLayouts)
    for (DType dtype : {DType::f16, DType::bf16}) {
      GemmCase gc = make_case(dtype, layout, 300, 260, 200, Fill::uniform_pm1, seed++);
      gc.beta = layout.a == Op::N ? 0.0f : 1.0f;
      calls.push_back({gc, {}, dtype == DType::f16 ? Entry::c_abi : Entry::cpp_api});
    }
  calls.push_back({make_case(DType::f16, kLayouts[0], 1024, 1536, 1024, Fill::uniform_pm1, seed++), {}});
  GemmCase odd = make_case(DType::bf16, kLayouts[0], 77, 55, 33, Fill::uniform_pm1, seed++);
  odd.ldb += 3;  // the fallback
  calls.push_back({odd, {}, Entry::c_abi});
  GemmCase k0 = make_case(DType::bf16, kLayouts[3], 40, 24, 0, Fill::uniform_pm1, seed++);
  k0.beta = 2.0f;
  calls.push_back({k0, {}});
  const std::vector<support::KernelVariant> variants = support::builtin_variants(own_backend());
  for (const support::KernelVariant& v : variants)
    calls.push_back({make_case(DType::f16,
                               v.builds(Op::T, Op::N)   ? kLayouts[2]
                               : v.builds(Op::T, Op::T) ? kLayouts[3]
                                                        : kLayouts[1],
                               400, 520, 192,
                               Fill::uniform_pm1, seed++),
                     v.options, Entry::cpp_api, &v});

  std::vector<std::unique_ptr<Problem>> probs;
  for (const Call& c : calls) probs.push_back(std::make_unique<Problem>(c.gc));
  Stream stream;
  for (size_t i = 0; i < calls.size(); ++i) reset_outputs(*probs[i], 7);
  std::vector<Plan> captured(calls.size());
  const Graph graph = Graph::capture(stream, cudaStreamCaptureModeGlobal, [&] {
    for (size_t i = 0; i < calls.size(); ++i)
      captured[i] = call(calls[i].entry, probs[i]->args(probs[i]->c(), stream), calls[i].options);
  });
  for (size_t i = 0; i < calls.size(); ++i) {
    TCGEMM_ASSERT_OK(captured[i], calls[i].gc.describe());
    if (calls[i].forced != nullptr) expect_ran(captured[i], *calls[i].forced, "captured " + calls[i].gc.describe());
  }
  EXPECT_GE(graph.num_nodes(), calls.size());

  for (uint64_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < calls.size(); ++i) {
      if (round > 0) probs[i]->refill_inputs(calls[i].gc.seed + 100 * round);
      reset_outputs(*probs[i], 8 + round);
      TCGEMM_ASSERT_OK(run_gemm(probs[i]->args(probs[i]->c_ref(), stream), calls[i].options), calls[i].gc.describe());
    }
    graph.replay(stream);
    for (size_t i = 0; i < calls.size(); ++i)
      expect_same_bits(*probs[i], "call " + std::to_string(i) + " of the graph, replay " + std::to_string(round) +
                                      ": " + calls[i].gc.describe());
  }
}

// A thread's first fallback call inside a capture (its cuBLAS handle is
// created then), the thread gone (its handle destroyed) before the graph is
// replayed from another thread.
TEST_F(Graphs, FirstCallOfAThreadCapturedAndReplayedAfterItExits) {
  GemmCase gc = make_case(DType::bf16, kLayouts[1], 96, 72, 136, Fill::uniform_pm1, 53000);
  gc.ldb += 1;  // the fallback
  for (const CaptureMode& mode : kModes) {
    SCOPED_TRACE(std::string("capture mode ") + mode.name);
    Problem prob(gc);
    Stream stream;
    Graph graph;
    Plan captured;
    std::string error;
    std::thread t([&] {
      try {
        graph = Graph::capture(stream, mode.mode, [&] { captured = tcgemm::gemm(prob.args(prob.c(), stream)); });
      } catch (const std::exception& e) {
        error = e.what();
      }
    });
    t.join();
    ASSERT_TRUE(error.empty()) << error;
    TCGEMM_ASSERT_OK(captured, gc.describe());
    EXPECT_EQ(captured.backend, Backend::cublas) << captured.reason;
    for (uint64_t round = 0; round < 2; ++round) {
      if (round > 0) prob.refill_inputs(gc.seed + 1);
      prob.poison_outputs();
      TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c_ref(), stream)), gc.describe());
      graph.replay(stream);
      expect_same_bits(prob, gc.describe());
    }
  }
}

// A call refused during a capture says why and leaves the capture intact:
// the refusal makes no call that capture forbids.
TEST_F(Graphs, RefusedCallDoesNotInvalidateTheCapture) {
  const GemmCase gc = make_case(DType::f16, kLayouts[0], 128, 128, 64, Fill::uniform_pm1, 54000);
  Problem prob(gc);
  std::vector<uint16_t> host(16);
  Stream stream;
  for (const CaptureMode& mode : kModes) {
    SCOPED_TRACE(std::string("capture mode ") + mode.name);
    prob.poison_outputs();
    Plan null_a, host_b, ok;
    const Graph graph = Graph::capture(stream, mode.mode, [&] {
      GemmArgs g = prob.args(prob.c(), stream);
      g.a = nullptr;
      null_a = tcgemm::gemm(g);
      g = prob.args(prob.c(), stream);
      g.b = host.data();
      host_b = tcgemm::gemm(g);
      ok = tcgemm::gemm(prob.args(prob.c(), stream));
    });
    EXPECT_EQ(null_a.status, Status::invalid_argument) << null_a.reason;
    EXPECT_TRUE(contains(null_a.reason, "A is a null pointer")) << null_a.reason;
    EXPECT_EQ(host_b.status, Status::invalid_argument) << host_b.reason;
    EXPECT_TRUE(contains(host_b.reason, "B is host memory")) << host_b.reason;
    TCGEMM_ASSERT_OK(ok, gc.describe());
    TCGEMM_ASSERT_OK(run_gemm(prob.args(prob.c_ref(), stream)), gc.describe());
    graph.replay(stream);
    expect_same_bits(prob, gc.describe());
  }
}

// While this thread holds a global-mode capture open, other threads start,
// run eager calls on their own streams (tcgemm's kernel, and the fallback:
// a cuBLAS handle created or taken from the pool) and exit (giving their
// handles back). The capture stays valid and every result is right.
TEST_F(Graphs, OtherThreadsRunAndExitDuringAGlobalCapture) {
  constexpr int kThreads = 4;
  const GemmCase own = make_case(DType::f16, kLayouts[1], 256, 512, 128, Fill::uniform_pm1, 55000);
  Problem captured_prob(own);
  std::vector<std::unique_ptr<Problem>> eager;
  for (int t = 0; t < kThreads; ++t) {
    GemmCase fallback = make_case(DType::bf16, kLayouts[t % 4], 100 + t, 60, 40, Fill::uniform_pm1, 55001 + t);
    fallback.ldc += 1;
    eager.push_back(std::make_unique<Problem>(own));
    eager.push_back(std::make_unique<Problem>(fallback));
  }
  Stream capture_stream;
  std::vector<std::unique_ptr<Stream>> streams;
  for (int t = 0; t < kThreads; ++t) streams.push_back(std::make_unique<Stream>());
  Plan captured;
  std::vector<Plan> plans(eager.size());

  const Graph graph = Graph::capture(capture_stream, cudaStreamCaptureModeGlobal, [&] {
    captured = tcgemm::gemm(captured_prob.args(captured_prob.c(), capture_stream));
    // No synchronization in these threads: that is illegal during a global
    // capture, for the test as for any caller.
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 2 * t; i < 2 * t + 2; ++i) plans[i] = tcgemm::gemm(eager[i]->args(eager[i]->c(), *streams[t]));
      });
    for (std::thread& th : threads) th.join();
  });
  check_cuda(cudaDeviceSynchronize(), "the eager calls");
  TCGEMM_ASSERT_OK(captured, own.describe());
  captured_prob.poison_c();
  graph.replay(capture_stream);
  std::vector<const Problem*> all{&captured_prob};
  for (size_t i = 0; i < eager.size(); ++i) {
    TCGEMM_ASSERT_OK(plans[i], eager[i]->gemm_case().describe());
    EXPECT_EQ(plans[i].backend, i % 2 ? Backend::cublas : own_backend()) << plans[i].reason;
    all.push_back(eager[i].get());
  }
  for (const Problem* p : all) {
    const GemmCase& gc = p->gemm_case();
    TCGEMM_ASSERT_OK(run_reference(p->args(p->c_ref())), gc.describe());
    expect_close(compare(gc.dtype, p->download_c(), p->download_ref(), poison_bits(gc.dtype), gc.m, gc.n, gc.ldc),
                 gc.dtype, gc.describe());
  }
}

// Programmatic dependent launch (Options::pdl, on by default): each kernel
// may start while the one before it finishes and must wait for it before it
// reads its output. A chain of GEMMs, each reading the previous one's C as
// its A, enqueued back to back with no synchronization (as a model's layers
// are), with the intermediates poisoned before every run: with PDL, without
// it, and captured in a graph with it, the final output has the same bits
// as a run that synchronizes after every GEMM. Decode-like (64-row tiles)
// and prefill-like (128-row tiles) M, fp16 and bf16.
TEST_F(Graphs, DependentChainSameBitsWithAndWithoutPdl) {
  Stream stream;
  constexpr int kLinks = 4;
  constexpr int64_t kWidth = 1536;
  for (const int64_t m : {int64_t{5}, int64_t{300}}) {
    for (DType dt : {DType::f16, DType::bf16}) {
      const std::string what = "chain of " + std::to_string(kLinks) + " GEMMs, M = " + std::to_string(m) + ", N = K = " +
                               std::to_string(kWidth) + ", " + to_string(dt);
      SCOPED_TRACE(what);
      using Buffer = support::DeviceBuffer<uint16_t>;
      // acts[0] = x, acts[i + 1] = acts[i] @ w[i]^T (the nn.Linear layout).
      std::vector<Buffer> acts, weights;
      for (int i = 0; i <= kLinks; ++i) acts.emplace_back(static_cast<size_t>(m * kWidth));
      // uniform(-a, a), a = sqrt(3 / K): the activations keep unit variance.
      const float a = std::sqrt(3.0f / kWidth);
      for (int i = 0; i < kLinks; ++i) {
        weights.emplace_back(static_cast<size_t>(kWidth * kWidth));
        support::fill_random(dt, weights[i].data(), weights[i].size(), support::uniform(-a, a), 61000 + i, stream);
      }
      support::fill_random(dt, acts[0].data(), acts[0].size(), support::uniform(-1.0f, 1.0f), 60999, stream);
      const auto link_args = [&](int i) {
        GemmArgs g{};
        g.dtype = dt;
        g.m = m;
        g.n = kWidth;
        g.k = kWidth;
        g.op_a = Op::N;
        g.op_b = Op::T;
        g.a = acts[i].data();
        g.lda = kWidth;
        g.b = weights[i].data();
        g.ldb = kWidth;
        g.c = acts[i + 1].data();
        g.ldc = kWidth;
        g.alpha = 1.0f;
        g.beta = 0.0f;
        g.stream = stream;
        return g;
      };
      const auto poison = [&] {
        for (int i = 1; i <= kLinks; ++i) fill_bits(acts[i].data(), acts[i].size(), poison_bits(dt), stream);
      };
      const auto enqueue = [&](const Options& options, std::vector<Plan>* plans) {
        for (int i = 0; i < kLinks; ++i) plans->push_back(tcgemm::gemm(link_args(i), options));
      };
      const auto result = [&] { return download(acts[kLinks].data(), acts[kLinks].size()); };

      // Reference: every GEMM completes before the next is issued.
      poison();
      for (int i = 0; i < kLinks; ++i) TCGEMM_ASSERT_OK(run_gemm(link_args(i), Options{}), what);
      const std::vector<uint16_t> want = result();
      ASSERT_EQ(std::count_if(want.begin(), want.end(), [&](uint16_t v) { return is_nan_or_inf(dt, v); }), 0)
          << "the reference left poison (or made NaN/Inf)";

      Options no_pdl;
      no_pdl.pdl = false;
      for (const Options& options : {Options{}, no_pdl}) {
        const std::string variant = options.pdl ? "back to back, PDL" : "back to back, no PDL";
        for (int rep = 0; rep < 3; ++rep) {
          poison();
          std::vector<Plan> plans;
          enqueue(options, &plans);
          check_cuda(cudaStreamSynchronize(stream), variant);
          for (const Plan& p : plans) TCGEMM_ASSERT_OK(p, variant);
          EXPECT_EQ(plans.front().backend, own_backend()) << plans.front().reason;
          ASSERT_EQ(result(), want) << variant << ", run " << rep;
        }
      }
      std::vector<Plan> captured;
      const Graph graph = Graph::capture(stream, cudaStreamCaptureModeThreadLocal, [&] { enqueue(Options{}, &captured); });
      for (const Plan& p : captured) TCGEMM_ASSERT_OK(p, "captured");
      for (int rep = 0; rep < 3; ++rep) {
        poison();
        graph.replay(stream);
        ASSERT_EQ(result(), want) << "graph with PDL, replay " << rep;
      }
    }
  }
}

}  // namespace
}  // namespace tcgemm::test
