// `tcgemm bench`: tcgemm against cuBLAS, measured so the ratio can be trusted.
//
// Per case (shape, dtype, layout), per round:
//   1. fresh random A and B (never zeros), C poisoned with NaN;
//   2. one call of each, verified: ours vs cuBLAS, bits and relative error;
//   3. one untimed call of each (warm-up), then `repeats` timed pairs,
//      interleaved and alternating which goes first, each call bracketed by
//      its own CUDA events and preceded by a 256 MiB L2 flush.
// Reported: medians over all rounds. The events are recorded on the stream,
// so a call's host work (planning, tensor maps) counts only where it is not
// hidden behind the flush or the previous launch: this is GPU time per call.
// Both backends are reached through tcgemm::gemm, the same way a user would.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "arg_parser.hpp"
#include "bench_report.hpp"
#include "bench_settings.hpp"
#include "chain.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "support/bandwidth.hpp"
#include "support/compare.hpp"
#include "support/device_buffer.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/diagnostics.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

// Times both backends on one case; fills row.ours_us / row.cublas_us.
class CaseRunner {
 public:
  CaseRunner(cudaStream_t stream, int repeats, int rounds, bool flush, uint64_t seed)
      : stream_(stream), repeats_(repeats), rounds_(rounds), seed_(seed) {
    if (flush) flusher_ = std::make_unique<support::L2Flusher>();
    events_.resize(4 * static_cast<size_t>(repeats));
    for (cudaEvent_t& e : events_) CHECK_CUDA(cudaEventCreate(&e));
  }
  ~CaseRunner() {
    for (cudaEvent_t e : events_) CHECK_CUDA(cudaEventDestroy(e));
  }
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  size_t flush_bytes() const { return flusher_ ? flusher_->bytes() : 0; }

  void run(BenchRow& row, size_t case_index) {
    const BenchCase& c = row.c;
    const Operands ops = operands_for(c.shape, c.layout);
    ElementBuffer a(ops.a_elems), b(ops.b_elems), c_ours(ops.c_elems), c_cublas(ops.c_elems);
    const GemmArgs ours_args = make_args(c.dtype, c.layout, c.shape, ops, a.data(), b.data(), c_ours.data(), 1.0f,
                                         0.0f, stream_);
    const GemmArgs cublas_args = make_args(c.dtype, c.layout, c.shape, ops, a.data(), b.data(), c_cublas.data(), 1.0f,
                                           0.0f, stream_);
    const Options ours_options = c.options;
    const Options cublas_options{Prefer::cublas_only, 0};
    // Which kernel the automatic choice would run, to mark it among forced configs.
    row.heuristic = same_kernel(plan(ours_args, Options{}), plan(ours_args, ours_options));

    for (int round = 0; round < rounds_; ++round) {
      // Fresh inputs every round (the leaderboard re-seeds before every call):
      // nothing may be cached on pointers or data between rounds.
      const uint64_t seed = seed_ + (static_cast<uint64_t>(case_index) << 20) + 2 * static_cast<uint64_t>(round);
      support::fill_random(c.dtype, a.data(), ops.a_elems, support::uniform(c.lo, c.hi), seed, stream_);
      support::fill_random(c.dtype, b.data(), ops.b_elems, support::uniform(c.lo, c.hi), seed + 1, stream_);
      for (const auto& [buf, count] : {std::pair{&a, ops.a_elems}, std::pair{&b, ops.b_elems}}) {
        if (!support::value_stats(c.dtype, buf->data(), count, stream_).usable_input()) row.inputs_ok = false;
      }

      // Verify once per round, before any timing.
      support::fill_bits(c_ours.data(), c_ours.size(), support::kNanAllOnes, stream_);
      support::fill_bits(c_cublas.data(), c_cublas.size(), support::kNanAllOnes, stream_);
      const Plan ours = gemm(ours_args, ours_options);
      const Plan cublas = gemm(cublas_args, cublas_options);
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      if (round == 0) row.plan = ours;
      if (ours.status != Status::ok) {
        row.error = format("tcgemm::gemm: %s: %s", to_string(ours.status), ours.reason.c_str());
        return;
      }
      if (cublas.status != Status::ok) {
        row.error = format("cuBLAS: %s: %s", to_string(cublas.status), cublas.reason.c_str());
        return;
      }
      // The table shows the worst round: a mismatch seen once must not be
      // averaged away by later rounds that happened to agree.
      const support::CompareStats st = support::compare(c.dtype, c_ours.data(), ops.ldc, c_cublas.data(), ops.ldc,
                                                        c.shape.m, c.shape.n, stream_);
      if (round == 0 || st.identical_fraction() < row.vs_cublas.identical_fraction() || !st.finite() ||
          st.norm_rel > row.vs_cublas.norm_rel)
        row.vs_cublas = st;

      // Warm-up, then timed pairs. Odd repeats run cuBLAS first, so neither
      // side always follows the other (clock and cache after-effects).
      call(ours_args, ours_options, row);
      call(cublas_args, cublas_options, row);
      for (int r = 0; r < repeats_; ++r) {
        for (int side : {r % 2, 1 - r % 2}) {
          if (flusher_) flusher_->flush(stream_);
          CHECK_CUDA(cudaEventRecord(event(side, r, 0), stream_));
          call(side == 0 ? ours_args : cublas_args, side == 0 ? ours_options : cublas_options, row);
          CHECK_CUDA(cudaEventRecord(event(side, r, 1), stream_));
        }
      }
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      if (!row.error.empty()) return;
      time_host(ours_args, ours_options, cublas_args, cublas_options, row);
      for (int r = 0; r < repeats_; ++r) {
        for (int side : {0, 1}) {
          float ms = 0.0f;
          CHECK_CUDA(cudaEventElapsedTime(&ms, event(side, r, 0), event(side, r, 1)));
          (side == 0 ? row.ours_us : row.cublas_us).push_back(1e3 * ms);
        }
      }
    }
  }

 private:
  // side 0 = ours, 1 = cuBLAS; end 0 = start, 1 = stop.
  cudaEvent_t event(int side, int repeat, int end) {
    return events_[(static_cast<size_t>(repeat) * 2 + side) * 2 + end];
  }
  // Host time per call: kHostCalls calls of each backend, alternating, each
  // timed on the CPU clock from entry to return. Back to back with no flush
  // between them, the launch queue holds at most 2 * kHostCalls kernels, far
  // from full, so no call waits for the GPU; the queue is drained after.
  void time_host(const GemmArgs& ours_args, const Options& ours_options, const GemmArgs& cublas_args,
                 const Options& cublas_options, BenchRow& row) {
    constexpr int kHostCalls = 16;
    for (int i = 0; i < kHostCalls; ++i) {
      for (int side : {i % 2, 1 - i % 2}) {
        const auto t0 = std::chrono::steady_clock::now();
        call(side == 0 ? ours_args : cublas_args, side == 0 ? ours_options : cublas_options, row);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        (side == 0 ? row.ours_host_us : row.cublas_host_us).push_back(us);
      }
    }
    CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  // A timed call can still be rejected (e.g. a stream error): the first
  // failure is kept and the row is shown without timings.
  void call(const GemmArgs& args, const Options& options, BenchRow& row) {
    const Plan p = gemm(args, options);
    if (p.status != Status::ok && row.error.empty())
      row.error = format("%s: %s", to_string(p.status), p.reason.c_str());
  }

  cudaStream_t stream_;
  int repeats_, rounds_;
  uint64_t seed_;
  std::unique_ptr<support::L2Flusher> flusher_;
  std::vector<cudaEvent_t> events_;
};

void print_header(const DeviceInfo& info, const BenchSettings& s) {
  std::printf("tcgemm bench on %s (%s, %d SMs, max SM clock %d MHz, memory %d MHz), driver CUDA %s, runtime %s, "
              "cuBLAS %s, tcgemm %s\n",
              info.name.c_str(), info.arch().c_str(), info.sm_count, info.sm_clock_max_khz / 1000,
              info.mem_clock_max_khz / 1000, cuda_version_string(info.driver_version).c_str(),
              cuda_version_string(info.runtime_version).c_str(), info.cublas_version().c_str(), build_info().version);
  std::printf("method: median of %lld timed calls x %lld round(s), ours and cuBLAS interleaved, %s, seed %llu\n",
              static_cast<long long>(s.repeats), static_cast<long long>(s.rounds),
              s.flush ? "L2 flushed (256 MiB write) before each call" : "no L2 flush",
              static_cast<unsigned long long>(s.seed));
  if (!s.chain)
    std::printf("host us: median CPU time of one tcgemm::gemm call, entry to return (16 back-to-back calls per "
                "round; the launch itself included)\n");
}

// The ceiling "%peak" is reported against, measured now on this GPU, per
// dtype (< 0: unknown).
std::map<std::string, double> measure_peaks(const BenchSettings& s) {
  std::map<std::string, double> peaks;
  for (const DType dtype : s.dtypes) {
    double tflops = -1.0;
    std::string why = "skipped (--no-peak)";
    if (s.measure_peak) {
      why.clear();
      tflops = measure_peak_tflops(dtype, 200.0, &why);
      // The library reports its own failures through `why`; a CUDA error left
      // behind is only reported here (a sticky one stops the next CHECK).
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
        std::fprintf(stderr, "tcgemm bench: peak measurement left %s: %s\n", cudaGetErrorName(e),
                     cudaGetErrorString(e));
    }
    peaks[to_string(dtype)] = tflops;
    if (tflops > 0)
      std::printf("peak %s: %.1f TFLOP/s (sustained wgmma loop, measured now)\n", to_string(dtype), tflops);
    else
      std::printf("peak %s: unavailable%s%s\n", to_string(dtype), why.empty() ? "" : ": ", why.c_str());
  }
  // The memory ceiling, for the memory-bound (small-M) shapes: GB/s.
  peaks[kHbmPeakKey] = s.measure_peak ? support::measure_hbm_read_gbps() : -1.0;
  if (peaks[kHbmPeakKey] > 0)
    std::printf("peak HBM read: %.0f GB/s (streaming read of 1 GiB, measured now)\n", peaks[kHbmPeakKey]);
  std::fflush(stdout);
  return peaks;
}

// The rows to time: every shape in every dtype and layout, shape-major (the
// dtypes and layouts of one shape run back to back, which keeps their rows
// together in the table), and with --configs all every built-in
// configuration of the device's family for each.
std::vector<BenchRow> expand_rows(const BenchSettings& s, const std::map<std::string, double>& peaks) {
  std::vector<BenchRow> rows;
  std::vector<support::KernelVariant> variants(1);  // the automatic choice
  if (s.all_configs) variants = support::builtin_variants(support::device_family());
  size_t group = 0;
  for (const BenchCase& t : s.shapes)
    for (const DType dtype : s.dtypes)
      for (const Layout layout : s.layouts) {
        for (const support::KernelVariant& v : variants) {
          if (!v.builds(layout.b)) continue;
          const Options& o = v.options;
          BenchRow row;
          row.c = t;
          row.c.dtype = dtype;
          row.c.layout = layout;
          row.c.options = o;
          row.group = group;
          row.peak = peaks.at(to_string(dtype));
          row.hbm = peaks.at(kHbmPeakKey);
          rows.push_back(std::move(row));
        }
        ++group;
      }
  return rows;
}

// Times every row, with progress on stderr; returns the L2 flush's size.
size_t time_rows(std::vector<BenchRow>& rows, const BenchSettings& s) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  size_t flush_bytes = 0;
  {
    CaseRunner runner(stream, s.repeats, s.rounds, s.flush, s.seed);
    flush_bytes = runner.flush_bytes();
    for (size_t i = 0; i < rows.size(); ++i) {
      BenchRow& row = rows[i];
      std::fprintf(stderr, "[%zu/%zu] %s %s %s%s ... ", i + 1, rows.size(), row.c.shape.str().c_str(),
                   to_string(row.c.dtype), row.c.layout.str().c_str(),
                   row.c.options.block_n ? format(" block_n=%d cluster_m=%d%s", row.c.options.block_n,
                                                  row.c.options.cluster_m, row.c.options.pingpong ? " pingpong" : "")
                                               .c_str()
                                         : "");
      std::fflush(stderr);
      runner.run(row, i);
      if (row.timed())
        std::fprintf(stderr, "%.1f us vs cuBLAS %.1f us (%.3fx)\n", row.ours_median(), row.cublas_median(),
                     row.speedup());
      else
        std::fprintf(stderr, "%s\n", row.warning().c_str());
    }
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  return flush_bytes;
}

}  // namespace

int run_bench(const ArgParser& parser) {
  // Options first: usage errors must not depend on having a GPU.
  BenchSettings settings;
  if (std::string why = parse_bench_settings(parser, &settings); !why.empty()) return usage_error(parser, why);
  // Open the JSON file now, so a bad path fails before minutes of timing.
  std::ofstream json;
  if (settings.json_path) {
    json.open(*settings.json_path);
    if (!json) {
      std::fprintf(stderr, "tcgemm bench: cannot write '%s'\n", settings.json_path->c_str());
      return kExitFailure;
    }
  }
  if (!select_device(settings.device)) return kExitUsage;

  const DeviceInfo info = query_device_info();
  print_header(info, settings);
  if (settings.chain) return run_chain(settings);
  const std::map<std::string, double> peaks = measure_peaks(settings);
  std::vector<BenchRow> rows = expand_rows(settings, peaks);
  const size_t flush_bytes = time_rows(rows, settings);

  print_table(rows);
  if (settings.all_configs) print_config_summary(rows);
  print_geomeans(rows);
  if (json.is_open()) {
    write_json(json, info, peaks, rows, settings, flush_bytes);
    json.close();
    if (!json) {
      std::fprintf(stderr, "tcgemm bench: writing '%s' failed\n", settings.json_path->c_str());
      return kExitFailure;
    }
    std::printf("wrote %s\n", settings.json_path->c_str());
  }
  // Slow is not a failure; a failed call or a NaN in our output is.
  bool all_ok = true;
  for (const BenchRow& r : rows) all_ok = all_ok && r.error.empty() && r.vs_cublas.nonfinite_x == 0;
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
