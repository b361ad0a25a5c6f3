// `tcgemm check --soak N [--streams S]`: N launches of tcgemm::gemm spread
// over S host threads, each with its own CUDA stream and its own operands,
// all running at once.
//
// Each thread cycles through a menu of shapes, layouts and dtypes with small
// integer inputs (so every correct kernel gives exactly the reference's
// bits) drawn from a seed of its own: a result that picked up another
// thread's data, or another launch's, cannot pass. Every 500th launch of a
// thread is a spot check: C is poisoned with NaN first, and after the launch
// it must equal the reference bit for bit. At the end every buffer is checked
// once more. Device and host memory are sampled after the first round and at
// the end: neither may grow.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "progress.hpp"
#include "support/compare.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

constexpr int kSpotEvery = 500;

struct SoakShape {
  Shape shape;
  Layout layout;
  DType dtype;
};
// Small and mid shapes (many launches per second), every layout and dtype,
// edges included (N % 8 != 0, M not a tile multiple).
const SoakShape kMenu[] = {
    {{128, 128, 128}, {Op::N, Op::N}, DType::f16},  {{256, 520, 64}, {Op::N, Op::T}, DType::bf16},
    {{1000, 1003, 96}, {Op::T, Op::N}, DType::f16}, {{64, 4096, 256}, {Op::T, Op::T}, DType::bf16},
    {{512, 512, 512}, {Op::N, Op::N}, DType::bf16}, {{2048, 1024, 128}, {Op::N, Op::T}, DType::f16},
    {{333, 77, 1000}, {Op::T, Op::T}, DType::f16},  {{1, 4096, 64}, {Op::N, Op::N}, DType::f16}};
constexpr int kMenuSize = static_cast<int>(std::size(kMenu));

// One thread's operands for one menu entry, and the reference result.
struct Problem {
  SoakShape s;
  Operands ops;
  ElementBuffer a, b, c, expected;
  GemmArgs args(cudaStream_t stream, uint16_t* out) const {
    return make_args(s.dtype, s.layout, s.shape, ops, a.data(), b.data(), out, 1.0f, 0.0f, stream);
  }
};

size_t host_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

size_t device_free_bytes() {
  size_t free = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free, &total));
  return free;
}

}  // namespace

int run_soak(int64_t launches, int streams, int device) {
  if (!select_device(device)) return kExitUsage;
  std::printf("tcgemm check --soak %lld --streams %d: %d shapes, spot check every %d launches per stream\n",
              static_cast<long long>(launches), streams, kMenuSize, kSpotEvery);
  std::fflush(stdout);

  // Set-up (one thread): operands and reference results.
  std::vector<std::vector<Problem>> problems(static_cast<size_t>(streams));
  for (int t = 0; t < streams; ++t) {
    for (int i = 0; i < kMenuSize; ++i) {
      Problem p{kMenu[i], operands_for(kMenu[i].shape, kMenu[i].layout, 8 * (t % 2)), {}, {}, {}, {}};
      p.a = ElementBuffer(static_cast<size_t>(p.ops.a_elems));
      p.b = ElementBuffer(static_cast<size_t>(p.ops.b_elems));
      p.c = ElementBuffer(static_cast<size_t>(p.ops.c_elems));
      p.expected = ElementBuffer(static_cast<size_t>(p.ops.c_elems));
      const uint64_t seed = 1000003ull * static_cast<uint64_t>(t) + 17ull * static_cast<uint64_t>(i) + 1;
      support::fill_random(p.s.dtype, p.a.data(), p.ops.a_elems, support::integers(-2, 2), seed, nullptr);
      support::fill_random(p.s.dtype, p.b.data(), p.ops.b_elems, support::integers(-2, 2), seed + 1, nullptr);
      support::fill_bits(p.expected.data(), p.expected.size(), support::kNanAllOnes, nullptr);
      const Plan r = reference_gemm(p.args(nullptr, p.expected.data()));
      if (r.status != Status::ok) {
        std::printf("reference failed: %s\n", r.reason.c_str());
        return kExitFailure;
      }
      problems[static_cast<size_t>(t)].push_back(std::move(p));
    }
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  std::atomic<int64_t> done{0}, spot_checks{0}, failures{0};
  std::mutex print;
  // On a terminal, the measured run's progress (the warm-up round is short).
  std::optional<Progress> progress;
  auto report = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(print);
    if (progress) progress->interrupt();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  // Checks C against the reference on `stream` (synchronizes it).
  auto check = [&](const Problem& p, cudaStream_t stream, int t, int64_t launch) {
    const support::CompareStats st = support::compare(p.s.dtype, p.c.data(), p.ops.ldc, p.expected.data(), p.ops.ldc,
                                                      p.s.shape.m, p.s.shape.n, stream);
    ++spot_checks;
    if (st.identical != st.count) {
      ++failures;
      report(format("FAIL stream %d launch %lld: %s %s %s: %lld of %lld outputs differ from the reference", t,
                    static_cast<long long>(launch), p.s.shape.str().c_str(), p.s.layout.str().c_str(),
                    to_string(p.s.dtype), static_cast<long long>(st.count - st.identical),
                    static_cast<long long>(st.count)));
    }
  };
  auto stream_loop = [&](int t, int64_t count, bool warmup) {
    cudaStream_t stream;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (int64_t i = 0; i < count; ++i) {
      const Problem& p = problems[static_cast<size_t>(t)][static_cast<size_t>((i * 5 + t) % kMenuSize)];
      const bool spot = !warmup && i % kSpotEvery == kSpotEvery - 1;
      if (spot) support::fill_bits(p.c.data(), p.c.size(), support::kNanAllOnes, stream);
      const Plan plan = gemm(p.args(stream, p.c.data()));
      if (plan.status != Status::ok) {
        ++failures;
        report(format("FAIL stream %d launch %lld: %s", t, static_cast<long long>(i), plan.reason.c_str()));
        break;
      }
      if (spot) check(p, stream, t, i);
      ++done;
      if (!warmup && progress) progress->advance(1);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    for (const Problem& p : problems[static_cast<size_t>(t)]) check(p, stream, t, count);
    CHECK_CUDA(cudaStreamDestroy(stream));
  };
  // One thread per stream, launches_of(t) launches each. A CudaError thrown
  // in a thread (the fills and comparisons throw) is rethrown here, after
  // the join, so that it ends the command as it does on the main thread.
  auto run_streams = [&](auto launches_of, bool warmup) {
    std::exception_ptr error;
    std::vector<std::thread> threads;
    for (int t = 0; t < streams; ++t)
      threads.emplace_back([&, t] {
        try {
          stream_loop(t, launches_of(t), warmup);
        } catch (...) {
          std::lock_guard<std::mutex> lock(print);
          if (!error) error = std::current_exception();
        }
      });
    for (auto& th : threads) th.join();
    if (error) std::rethrow_exception(error);
  };

  // A first round on every stream (kernel set-up, library caches, the
  // comparison's kernels; these threads' cuBLAS handles come and go), then
  // the baseline for memory growth.
  run_streams([](int) { return int64_t{2 * kMenuSize}; }, true);
  CHECK_CUDA(cudaDeviceSynchronize());
  const size_t free_before = device_free_bytes(), rss_before = host_rss_bytes();
  done = 0;
  spot_checks = 0;

  const auto start = std::chrono::steady_clock::now();
  progress.emplace("soak", launches);
  run_streams([&](int t) { return launches / streams + (t < launches % streams ? 1 : 0); }, false);
  CHECK_CUDA(cudaDeviceSynchronize());
  progress->finish();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t free_after = device_free_bytes(), rss_after = host_rss_bytes();
  const long long device_growth = static_cast<long long>(free_before) - static_cast<long long>(free_after);
  const long long host_growth = static_cast<long long>(rss_after) - static_cast<long long>(rss_before);
  std::printf("soak: %lld launches on %d streams in %.1f s (%.0f launches/s); %lld spot checks, %lld failures; "
              "device memory in use grew by %lld bytes, host RSS by %lld bytes\n",
              static_cast<long long>(done.load()), streams, secs, static_cast<double>(done.load()) / secs,
              static_cast<long long>(spot_checks.load()), static_cast<long long>(failures.load()), device_growth,
              host_growth);
  // Host RSS may move by a few pages (allocator, driver bookkeeping); a leak
  // of even a few bytes per launch shows as megabytes here.
  const bool leak = device_growth > 0 || host_growth > (1 << 20);
  if (leak) std::printf("FAIL: memory grew over the run\n");
  return failures.load() == 0 && !leak && done.load() == launches ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
