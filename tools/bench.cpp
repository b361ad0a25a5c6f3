// `tcgemm bench`: tcgemm against cuBLAS, measured so the ratio can be trusted.
//
// Three sides per case: ours (tcgemm::gemm, as a user calls it), cuBLAS as
// PyTorch configures it for torch.matmul (the baseline: what users compare
// with; torch_cublas.hpp), and cuBLAS as tcgemm's own fallback configures it
// (reduced-precision reductions disallowed; reached through tcgemm::gemm).
// Per case (shape, dtype, layout), per round:
//   1. fresh random A and B (never zeros), every C poisoned with NaN;
//   2. one call of each, verified: ours against both cuBLAS results, bits
//      and relative error;
//   3. one untimed call of each (warm-up), then `repeats` timed triples,
//      interleaved and rotating which goes first, each call bracketed by its
//      own CUDA events and preceded by a 256 MiB L2 flush (--flush: a
//      write by default, or a read).
// Reported: medians over all rounds. The events are recorded on the stream,
// so a call's host work (planning, tensor maps) counts only where it is not
// hidden behind the flush or the previous launch: this is GPU time per call.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

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
#include "progress.hpp"
#include "torch_cublas.hpp"

namespace tcgemm::cli {

namespace {

// The timed sides of a case: kPlain only with a fused epilogue (ours then
// runs it; kPlain is the same call without it); kRead, on the automatic
// choice's row when the HBM ceiling is measured, a plain read of as many
// bytes as the GEMM moves at least (what a memory-bound call could reach at
// its size: support::HbmRead).
enum Side : int { kOurs = 0, kCublas = 1, kStrict = 2, kPlain = 3, kRead = 4, kMaxSides = 5 };

// Times the sides on one case; fills row.ours_us / cublas_us / strict_us
// (and plain_us).
class CaseRunner {
 public:
  CaseRunner(cudaStream_t stream, int repeats, int rounds, support::L2Flush flush, uint64_t seed,
             const FusedEpilogue& fused, bool time_read)
      : stream_(stream), repeats_(repeats), rounds_(rounds), seed_(seed), fused_(fused), time_read_(time_read) {
    if (flush != support::L2Flush::none) flusher_ = std::make_unique<support::L2Flusher>(flush);
    events_.resize(2 * kMaxSides * static_cast<size_t>(repeats));
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
    // (--batch: every operand `batch` matrices, 16-byte aligned strides apart.)
    const BatchLayout bl(c.batch, ops);
    const size_t a_total = bl.total(ops.a_elems, bl.stride_a), b_total = bl.total(ops.b_elems, bl.stride_b),
                 c_total = bl.total(ops.c_elems, bl.stride_c);
    ElementBuffer a(a_total), b(b_total), c_ours(c_total), c_cublas(c_total), c_strict(c_total);
    ElementBuffer c_plain(fused_.any() ? c_total : 0);
    const auto args_into = [&](ElementBuffer& out) {
      GemmArgs g = make_args(c.dtype, c.layout, c.shape, ops, a.data(), b.data(), out.data(), 1.0f, 0.0f, stream_);
      bl.apply(g);
      return g;
    };
    std::array<GemmArgs, kMaxSides> args{args_into(c_ours), args_into(c_cublas), args_into(c_strict),
                                         args_into(c_plain)};
    const BiasVector bias(fused_, c.dtype, c.shape.n, seed_ + 7, stream_);
    bias.apply(args[kOurs]);
    // The output the cuBLAS sides are compared with: the GEMM without the epilogue.
    ElementBuffer& c_gemm = fused_.any() ? c_plain : c_ours;
    // With --configs all: the forced configuration that runs the same kernel
    // as the automatic choice (on as many SMs), if one does; none where no
    // tcgemm kernel takes the call at all.
    Options automatic;
    automatic.sm_count = c.options.sm_count;
    const Plan pick = plan(args[kOurs], automatic);
    if (!row.heuristic && pick.status == Status::ok && pick.backend == Backend::cublas) {
      row.not_applicable = true;
      return;
    }
    row.same_as_pick = !row.heuristic && same_kernel(pick, plan(args[kOurs], c.options));
    std::vector<Side> sides = {kOurs, kCublas, kStrict};
    if (fused_.any()) sides.push_back(kPlain);
    if (time_read_ && row.heuristic) {
      read_ = std::make_unique<support::HbmRead>(static_cast<size_t>(row.min_bytes()));
      sides.push_back(kRead);
    }
    const int n_sides = static_cast<int>(sides.size());

    for (int round = 0; round < rounds_; ++round) {
      // Fresh inputs every round (the leaderboard re-seeds before every call):
      // nothing may be cached on pointers or data between rounds.
      const uint64_t seed = seed_ + (static_cast<uint64_t>(case_index) << 20) + 2 * static_cast<uint64_t>(round);
      const auto a_count = static_cast<int64_t>(a_total), b_count = static_cast<int64_t>(b_total);
      support::fill_random(c.dtype, a.data(), a_count, support::uniform(c.lo, c.hi), seed, stream_);
      support::fill_random(c.dtype, b.data(), b_count, support::uniform(c.lo, c.hi), seed + 1, stream_);
      for (const auto& [buf, count] : {std::pair{&a, a_count}, std::pair{&b, b_count}}) {
        if (!support::value_stats(c.dtype, buf->data(), count, stream_).usable_input()) row.inputs_ok = false;
      }

      // Verify once per round, before any timing.
      for (ElementBuffer* out : {&c_ours, &c_cublas, &c_strict, &c_plain})
        support::fill_bits(out->data(), out->size(), support::kNanAllOnes, stream_);
      const Plan ours = gemm(args[kOurs], c.options);
      if (round == 0) row.plan = ours;
      if (ours.status != Status::ok) {
        row.error = format("tcgemm::gemm: %s: %s", to_string(ours.status), ours.reason.c_str());
        return;
      }
      for (const Side side : sides)
        if (side != kOurs && side != kRead) call(side, args[side], c.options, row);
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      if (!row.error.empty()) return;
      if (fused_.any()) {  // (its values are the check's business: only NaN/Inf here)
        const support::CompareStats st = compare_batch(c.dtype, c_ours.data(), c_plain.data(), ops, c.shape, bl, stream_);
        row.fused_nonfinite = std::max(row.fused_nonfinite, st.nonfinite_x);
      }
      // The table shows the worst round: a mismatch seen once must not be
      // averaged away by later rounds that happened to agree.
      for (auto [theirs, worst] : {std::pair{&c_strict, &row.vs_cublas}, std::pair{&c_cublas, &row.vs_torch_config}}) {
        const support::CompareStats st = compare_batch(c.dtype, c_gemm.data(), theirs->data(), ops, c.shape, bl, stream_);
        if (round == 0 || st.worse_than(*worst)) *worst = st;
      }

      // Warm-up, then timed triples (quadruples...). The side that goes first
      // rotates, so none always follows another (clock and cache after-effects).
      for (const Side side : sides) call(side, args[side], c.options, row);
      for (int r = 0; r < repeats_; ++r) {
        for (int i = 0; i < n_sides; ++i) {
          const Side side = sides[(r + i) % n_sides];
          if (flusher_) flusher_->flush(stream_);
          CHECK_CUDA(cudaEventRecord(event(side, r, 0), stream_));
          call(side, args[side], c.options, row);
          CHECK_CUDA(cudaEventRecord(event(side, r, 1), stream_));
        }
      }
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      if (!row.error.empty()) return;
      time_host(args[kOurs], c.options, args[kStrict], row);
      for (int r = 0; r < repeats_; ++r) {
        for (const Side side : sides) {
          float ms = 0.0f;
          CHECK_CUDA(cudaEventElapsedTime(&ms, event(side, r, 0), event(side, r, 1)));
          std::vector<double>& samples = side == kOurs     ? row.ours_us
                                         : side == kCublas ? row.cublas_us
                                         : side == kStrict ? row.strict_us
                                         : side == kPlain  ? row.plain_us
                                                           : row.read_us;
          samples.push_back(1e3 * ms);
        }
      }
    }
  }

 private:
  // end 0 = start, 1 = stop.
  cudaEvent_t event(int side, int repeat, int end) {
    return events_[(static_cast<size_t>(repeat) * kMaxSides + side) * 2 + end];
  }
  // Host time per call: kHostCalls calls of ours and of tcgemm's cuBLAS
  // fallback, alternating, each timed on the CPU clock from entry to return.
  // Back to back with no flush between them, the launch queue holds at most
  // 2 * kHostCalls kernels, far from full, so no call waits for the GPU; the
  // queue is drained after.
  void time_host(const GemmArgs& ours_args, const Options& ours_options, const GemmArgs& strict_args, BenchRow& row) {
    constexpr int kHostCalls = 16;
    for (int i = 0; i < kHostCalls; ++i) {
      for (const Side side : {i % 2 ? kStrict : kOurs, i % 2 ? kOurs : kStrict}) {
        const auto t0 = std::chrono::steady_clock::now();
        call(side, side == kOurs ? ours_args : strict_args, ours_options, row);
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        (side == kOurs ? row.ours_host_us : row.cublas_host_us).push_back(us);
      }
    }
    CHECK_CUDA(cudaStreamSynchronize(stream_));
  }

  // One call of a side (`options` are ours). A timed call can still be
  // rejected (e.g. a stream error): the first failure is kept and the row is
  // shown without timings.
  void call(Side side, const GemmArgs& args, const Options& options, BenchRow& row) {
    std::string why;
    if (side == kRead) {
      read_->launch(stream_);
      return;
    }
    if (side == kCublas) {
      why = torch_cublas_.gemm(args);
      if (!why.empty()) why = "cuBLAS (torch's configuration): " + why;
    } else {
      const Plan p = gemm(args, side == kStrict ? Options{Prefer::cublas_only, 0} : options);
      if (p.status != Status::ok)
        why = format("%s%s: %s", side == kStrict ? "cuBLAS (tcgemm's fallback): " : "", to_string(p.status),
                     p.reason.c_str());
    }
    if (!why.empty() && row.error.empty()) row.error = why;
  }

  cudaStream_t stream_;
  int repeats_, rounds_;
  uint64_t seed_;
  FusedEpilogue fused_;
  bool time_read_;                         // kRead on the automatic choice's rows
  std::unique_ptr<support::HbmRead> read_;  // the current row's, when it has kRead
  std::unique_ptr<support::L2Flusher> flusher_;
  std::vector<cudaEvent_t> events_;
  TorchConfiguredCublas torch_cublas_;
};

void print_header(const DeviceInfo& info, const BenchSettings& s) {
  std::printf("tcgemm bench on %s (%s, %d SMs, max SM clock %d MHz, memory %d MHz), driver CUDA %s, runtime %s, "
              "cuBLAS %s, tcgemm %s\n",
              info.name.c_str(), info.arch().c_str(), info.sm_count, info.sm_clock_max_khz / 1000,
              info.mem_clock_max_khz / 1000, cuda_version_string(info.driver_version).c_str(),
              cuda_version_string(info.runtime_version).c_str(), info.cublas_version().c_str(), build_info().version);
  std::printf("method: median of %lld timed calls x %lld round(s), ours and both cuBLAS configurations interleaved, %s, seed %llu\n",
              static_cast<long long>(s.repeats), static_cast<long long>(s.rounds),
              flush_description(s.flush, "call").c_str(),
              static_cast<unsigned long long>(s.seed));
  if (s.batch > 1)
    std::printf("batch: every call a strided batch of %lld problems of the shape (cuBLAS: "
                "cublasGemmStridedBatchedEx); TFLOP/s and GB/s count them all\n",
                static_cast<long long>(s.batch));
  if (s.fused.any())
    std::printf("fused epilogue: %s; ours runs it, plain is the same tcgemm call without it (timed in the same "
                "rotation); cuBLAS runs the GEMM alone and =cuBLAS compares the plain call\n",
                s.fused.str().c_str());
  if (!s.chain) {
    std::printf("cuBLAS: as PyTorch configures it for torch.matmul (its own workspace: 32 MiB on sm_90, 8.125 MiB "
                "elsewhere; reduced-precision reductions allowed); speedup = its time / ours\n");
    std::printf("strict: cuBLAS as tcgemm's fallback calls it (reduced-precision reductions disallowed); "
                "=cuBLAS: our bits equal to it\n");
    std::printf("host us: median CPU time of one tcgemm::gemm call, entry to return (16 back-to-back calls per "
                "round; the launch itself included)\n");
  }
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

// Whether --only (non-empty) names configuration `v`: its label contains the text.
bool named_by_only(const support::KernelVariant& v, const std::string& only) {
  return v.label.find(only) != std::string::npos;
}

// The rows to time: every shape in every dtype and layout, shape-major (the
// dtypes and layouts of one shape run back to back, which keeps their rows
// together in the table), and with --configs all every built-in
// configuration of the device's family for each, then the automatic choice
// itself (which may run a configuration no forced one does: the shallow ring
// of the small problems).
std::vector<BenchRow> expand_rows(const BenchSettings& s, const std::map<std::string, double>& peaks) {
  std::vector<BenchRow> rows;
  std::vector<support::KernelVariant> variants;
  if (s.all_configs) variants = support::builtin_variants(support::device_family());
  // (--sm-count bounds a persistent grid: the Cluster Launch Control variants are not for it.)
  if (s.sm_count > 0)
    std::erase_if(variants, [](const support::KernelVariant& v) {
      return v.options.schedule == Schedule::cluster_launch_control;
    });
  if (!s.only.empty())  // (--only: the labels containing it; run_bench checked that some are timed)
    std::erase_if(variants, [&](const support::KernelVariant& v) { return !named_by_only(v, s.only); });
  variants.emplace_back();  // the automatic choice: Options{}
  // (--schedule: each of them again under each schedule named, right after it.)
  if (!s.schedules.empty()) {
    std::vector<support::KernelVariant> with_schedules;
    for (const support::KernelVariant& v : variants) {
      with_schedules.push_back(v);
      for (const Schedule schedule : s.schedules) {
        with_schedules.push_back(v);
        with_schedules.back().options.schedule = schedule;
      }
    }
    variants = std::move(with_schedules);
  }
  size_t group = 0;
  for (const BenchCase& t : s.shapes)
    for (const DType dtype : s.dtypes)
      for (const Layout layout : s.layouts_of(t)) {
        for (const support::KernelVariant& v : variants) {
          if (!v.builds(layout.a, layout.b)) continue;
          const Options& o = v.options;
          BenchRow row;
          row.c = t;
          row.c.dtype = dtype;
          row.c.layout = layout;
          row.c.options = o;
          row.c.options.sm_count = s.sm_count;
          row.c.batch = s.batch;
          row.heuristic = o.block_n == 0 && o.schedule == Schedule::automatic;  // the automatic choice's own row
          row.group = group;
          row.peak = peaks.at(to_string(dtype));
          row.hbm = peaks.at(kHbmPeakKey);
          rows.push_back(std::move(row));
        }
        ++group;
      }
  return rows;
}

// Times every row (on a terminal, with a progress line; quiet with --json
// or when not on one); returns the L2 flush's size.
size_t time_rows(std::vector<BenchRow>& rows, const BenchSettings& s) {
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  size_t flush_bytes = 0;
  {
    CaseRunner runner(stream, s.repeats, s.rounds, s.flush, s.seed, s.fused, s.measure_peak);
    flush_bytes = runner.flush_bytes();
    Progress progress("bench", static_cast<int64_t>(rows.size()), stderr_is_terminal() && !s.json_path);
    const auto name = [](const BenchRow& row) {
      const Options& o = row.c.options;
      return row.c.shape.str() + " " + to_string(row.c.dtype) + " " + row.c.layout.str() +
             (o.block_n ? format(" block_n=%d cluster_m=%d%s%s%s", o.block_n, o.cluster_m, o.pingpong ? " pingpong" : "",
                                 o.cluster_n > 1 ? " cluster_n=2" : "", o.swap_ab ? " swap_ab" : "")
                        : "") +
             (o.schedule != Schedule::automatic ? std::string(" schedule=") + to_string(o.schedule) : "");
    };
    for (size_t i = 0; i < rows.size(); ++i) {
      progress.advance(i == 0 ? 0 : 1, name(rows[i]));
      runner.run(rows[i], i);
    }
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  const size_t dropped = std::erase_if(rows, [](const BenchRow& r) { return r.not_applicable; });
  if (dropped > 0)
    std::printf("note: %zu forced configurations left out: their cases' operands no tcgemm kernel takes (the "
                "automatic choice runs cuBLAS)\n",
                dropped);
  return flush_bytes;
}

}  // namespace

int run_bench(const ArgParser& parser) {
  // Options first: usage errors must not depend on having a GPU.
  BenchSettings settings;
  if (std::string why = parse_bench_settings(parser, &settings); !why.empty()) return usage_error(parser, why);
  // The JSON record goes to --json's file (opened now, so a bad path fails
  // before minutes of timing) or, for --plot alone, to a temporary one the
  // picture is drawn from (removed after).
  std::string record_path = settings.json_path.value_or("");
  std::ofstream json;
  auto open_record = [&] {
    json.open(record_path);
    if (!json) std::fprintf(stderr, "tcgemm bench: cannot write '%s'\n", record_path.c_str());
    return static_cast<bool>(json);
  };
  if (!select_device(settings.device)) return kExitUsage;
  // --only: some configuration it names must be built for a layout timed.
  if (!settings.only.empty()) {
    std::vector<Layout> timed_layouts;
    for (const BenchCase& c : settings.shapes)
      for (const Layout& l : settings.layouts_of(c))
        if (std::ranges::none_of(timed_layouts, [&](const Layout& t) { return t.str() == l.str(); }))
          timed_layouts.push_back(l);
    const auto timed = [&](const support::KernelVariant& v) {
      return named_by_only(v, settings.only) &&
             !(settings.sm_count > 0 && v.options.schedule == Schedule::cluster_launch_control) &&
             std::ranges::any_of(timed_layouts, [&](const Layout& l) { return v.builds(l.a, l.b); });
    };
    if (std::ranges::none_of(support::builtin_variants(support::device_family()), timed)) {
      std::string layouts;
      for (const Layout& l : timed_layouts) layouts += (layouts.empty() ? "" : ", ") + l.str();
      std::fprintf(stderr,
                   "tcgemm bench: --only '%s' matches no configuration of this GPU's kernels built for the layouts "
                   "timed (%s)\n",
                   settings.only.c_str(), layouts.c_str());
      return kExitUsage;
    }
  }
  // --schedule: only the schedules this GPU's kernel family has.
  const Backend family = settings.schedules.empty() ? Backend::none : support::device_family();
  for (const Schedule schedule : settings.schedules) {
    if ((schedule == Schedule::counted && family != Backend::sm90) ||
        (schedule == Schedule::cluster_launch_control && family != Backend::sm100)) {
      std::fprintf(stderr, "tcgemm bench: --schedule %s is for %s GPUs; this one is not\n",
                   schedule == Schedule::counted ? "counted" : "clc",
                   schedule == Schedule::counted ? "sm_90 (Hopper)" : "sm_100 (Blackwell)");
      return kExitUsage;
    }
  }
  // (A --json path that cannot be written is the caller's to fix: a usage error.)
  if (!record_path.empty() && !open_record()) return kExitUsage;

  const DeviceInfo info = query_device_info();
  print_header(info, settings);
  if (settings.chain) return run_chain(settings);
  if (record_path.empty() && settings.plot_path) {
    char name[] = "/tmp/tcgemm_bench_XXXXXX";
    const int fd = mkstemp(name);
    if (fd < 0) {
      std::fprintf(stderr, "tcgemm bench: cannot create a temporary file for --plot\n");
      return kExitFailure;
    }
    close(fd);
    record_path = name;
    if (!open_record()) return kExitFailure;
  }
  const std::map<std::string, double> peaks = measure_peaks(settings);
  std::vector<BenchRow> rows = expand_rows(settings, peaks);
  const size_t flush_bytes = time_rows(rows, settings);

  print_table(rows);
  if (settings.fused.any()) print_epilogue_overhead(rows);
  if (settings.all_configs) print_config_summary(rows);
  print_geomeans(rows);
  if (json.is_open()) {
    write_json(json, info, peaks, rows, settings, flush_bytes);
    json.close();
    if (!json) {
      std::fprintf(stderr, "tcgemm bench: writing '%s' failed\n", record_path.c_str());
      return kExitFailure;
    }
    if (settings.json_path) std::printf("wrote %s\n", record_path.c_str());
  }
  if (settings.plot_path) {
    const std::string why = draw_plot(record_path, *settings.plot_path);
    if (!settings.json_path) std::remove(record_path.c_str());
    if (!why.empty()) {
      std::fprintf(stderr, "tcgemm bench: --plot: %s\n", why.c_str());
      return kExitFailure;
    }
  }
  // Slow is not a failure; a failed call, a NaN in our output, or a result
  // farther from cuBLAS's than the normwise tolerance (the table's "WARN:
  // rel diff") is.
  bool all_ok = true;
  for (const BenchRow& r : rows)
    all_ok = all_ok && r.error.empty() && r.vs_cublas.nonfinite_x == 0 && r.fused_nonfinite == 0 && r.close();
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
