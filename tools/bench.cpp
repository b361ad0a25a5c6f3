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
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "arg_parser.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "json_writer.hpp"
#include "suites.hpp"
#include "support/compare.hpp"
#include "support/device_buffer.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/diagnostics.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

constexpr uint64_t kDefaultSeed = 1234;

struct BenchCase {
  Shape shape;
  DType dtype;
  Layout layout;
  float lo, hi;        // input distribution
  std::string source;  // suite name or "--shape"
  Options options{};   // ours: automatic, or one forced configuration (--configs all)
};

struct BenchRow {
  BenchCase c;
  Plan plan;                        // ours, from the verification call
  std::string error;                // a failed call: no timings
  std::vector<double> ours_us, cublas_us;
  support::CompareStats vs_cublas;  // the worst round (lowest identical fraction)
  bool inputs_ok = true;
  size_t group = 0;                 // rows of one (shape, dtype, layout) share it
  bool heuristic = false;           // this configuration is what the automatic choice runs
  double peak = -1.0;               // TFLOP/s ceiling for the dtype, < 0 if unknown

  bool timed() const { return error.empty() && !ours_us.empty(); }
  double ours_median() const { return median(ours_us); }
  double cublas_median() const { return median(cublas_us); }
  double ours_tflops() const { return c.shape.flops() / (ours_median() * 1e-6) / 1e12; }
  double cublas_tflops() const { return c.shape.flops() / (cublas_median() * 1e-6) / 1e12; }
  double speedup() const { return cublas_median() / ours_median(); }
  bool close() const { return vs_cublas.finite() && vs_cublas.norm_rel < support::normwise_tolerance(c.dtype); }
  std::string warning() const {
    if (!error.empty()) return "ERROR: " + error;
    if (!inputs_ok) return "WARN: inputs not random";
    if (vs_cublas.nonfinite_x > 0) return format("WARN: %lld NaN/Inf", static_cast<long long>(vs_cublas.nonfinite_x));
    if (vs_cublas.nonfinite_ref > 0) return "WARN: cuBLAS NaN/Inf";
    if (!close()) return format("WARN: rel diff %.1e", vs_cublas.norm_rel);
    return "";
  }
};

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
    row.heuristic = plan(ours_args, Options{}).kernel == plan(ours_args, ours_options).kernel;

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

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Times in microseconds, TFLOP/s from the medians; the last column is empty
// unless something needs a second look.
void print_table(const std::vector<BenchRow>& rows) {
  const char* head = "%-16s %-5s %-3s %-28s %10s %10s %8s %8s %6s %8s %8s  %s\n";
  std::printf(head, "shape", "dtype", "lay", "kernel", "ours us", "cuBLAS us", "ours TF", "cuBLAS TF", "%peak",
              "speedup", "=cuBLAS", "");
  for (const BenchRow& r : rows) {
    std::string kernel = r.plan.status == Status::ok ? short_kernel(r.plan) : "rejected";
    // With --configs all, '*' marks the configuration the heuristic picks.
    if (r.c.options.block_n != 0) kernel = (r.heuristic ? "*" : " ") + kernel;
    if (!r.timed()) {
      std::printf(head, r.c.shape.str().c_str(), to_string(r.c.dtype), r.c.layout.str().c_str(), kernel.c_str(), "-",
                  "-", "-", "-", "-", "-", "-", r.warning().c_str());
      continue;
    }
    const std::string peak = r.peak > 0 ? format("%.1f", 100.0 * r.ours_tflops() / r.peak) : "-";
    std::printf(head, r.c.shape.str().c_str(), to_string(r.c.dtype), r.c.layout.str().c_str(), kernel.c_str(),
                format("%.1f", r.ours_median()).c_str(), format("%.1f", r.cublas_median()).c_str(),
                format("%.1f", r.ours_tflops()).c_str(), format("%.1f", r.cublas_tflops()).c_str(), peak.c_str(),
                format("%.3fx", r.speedup()).c_str(),
                format("%.1f%%", 100.0 * r.vs_cublas.identical_fraction()).c_str(), r.warning().c_str());
  }
}

// Geometric mean of cuBLAS time / ours, per dtype, over what users get: the
// automatic choice (with --configs all, the rows the heuristic picks).
std::map<std::string, std::pair<double, int>> geomeans(const std::vector<BenchRow>& rows) {
  std::map<std::string, std::pair<double, int>> logs;
  for (const BenchRow& r : rows) {
    if (!r.timed() || !r.heuristic) continue;
    auto& [sum, n] = logs[to_string(r.c.dtype)];
    sum += std::log(r.speedup());
    ++n;
  }
  for (auto& [dtype, entry] : logs) entry.first = std::exp(entry.first / entry.second);
  return logs;
}

// --configs all: per case, the heuristic's pick against the fastest config.
// Configs are ranked by their speedup over the cuBLAS calls interleaved with
// them, not by raw time: the rows of one case run one after another, and the
// GPU's clock drifts between them by more than the configs differ.
void print_config_summary(const std::vector<BenchRow>& rows) {
  std::printf("\nheuristic vs best configuration (best speedup / speedup of the pick):\n");
  double worst = 1.0;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    const BenchRow* best = nullptr;
    const BenchRow* pick = nullptr;
    for (; j < rows.size() && rows[j].group == rows[i].group; ++j) {
      const BenchRow& r = rows[j];
      if (!r.timed()) continue;
      if (best == nullptr || r.speedup() > best->speedup()) best = &r;
      if (r.heuristic) pick = &r;
    }
    if (best != nullptr && pick != nullptr) {
      const double ratio = best->speedup() / pick->speedup();
      worst = std::max(worst, ratio);
      std::printf("  %-16s %-5s %-3s pick %-26s best %-26s %.3f%s\n", rows[i].c.shape.str().c_str(),
                  to_string(rows[i].c.dtype), rows[i].c.layout.str().c_str(), short_kernel(pick->plan).c_str(),
                  short_kernel(best->plan).c_str(), ratio, ratio > 1.03 ? "  > 3%" : "");
    }
    i = j;
  }
  std::printf("worst best/pick: %.3f\n", worst);
}

void write_json(std::ofstream& file, const DeviceInfo& d, const std::map<std::string, double>& peaks,
                const std::vector<BenchRow>& rows, const std::vector<std::string>& suites, const ArgParser& parser,
                int repeats, int rounds,
                size_t flush_bytes, uint64_t seed) {
  const BuildInfo build = build_info();
  JsonWriter j;
  j.begin_object();
  j.member("tool", "tcgemm bench").member("timestamp", now_iso8601());
  j.key("library").begin_object();
  j.member("version", build.version).member("cuda_archs", build.cuda_archs);
  j.member("kernel_families", build.kernel_families).member("cuda_runtime_version", build.cuda_runtime_version);
  j.end_object();
  j.key("device").begin_object();
  j.member("index", d.index).member("name", d.name).member("pci_bus_id", d.pci_bus_id);
  j.member("compute_capability", format("%d.%d", d.cc_major, d.cc_minor)).member("sm_count", d.sm_count);
  j.member("sm_clock_max_mhz", d.sm_clock_max_khz / 1000).member("mem_clock_max_mhz", d.mem_clock_max_khz / 1000);
  j.member("mem_bus_width_bits", d.mem_bus_width_bits).member("peak_bandwidth_gbs", d.peak_bandwidth_gbs());
  j.member("l2_bytes", d.l2_bytes).member("memory_bytes", static_cast<uint64_t>(d.total_memory));
  j.member("driver_version", d.driver_version).member("runtime_version", d.runtime_version);
  j.member("cublas_version", d.cublas_version());
  j.end_object();
  j.key("settings").begin_object();
  j.key("suites").begin_array();
  for (const std::string& s : suites) j.value(s);
  j.end_array();
  j.key("shapes").begin_array();
  for (const std::string& s : parser.get_all("shape")) j.value(s);
  j.end_array();
  j.member("repeats", repeats).member("rounds", rounds).member("l2_flush_bytes", static_cast<uint64_t>(flush_bytes));
  j.member("seed", static_cast<uint64_t>(seed)).member("statistic", "median");
  j.end_object();
  j.key("peak_tflops").begin_object();
  for (const auto& [dtype, tflops] : peaks) {
    j.key(dtype);
    if (tflops > 0) j.value(tflops); else j.null();
  }
  j.end_object();
  j.key("results").begin_array();
  for (const BenchRow& r : rows) {
    j.begin_object();
    j.member("source", r.c.source).member("m", r.c.shape.m).member("n", r.c.shape.n).member("k", r.c.shape.k);
    j.member("dtype", to_string(r.c.dtype)).member("layout", r.c.layout.str());
    j.member("input_low", static_cast<double>(r.c.lo)).member("input_high", static_cast<double>(r.c.hi));
    j.member("backend", to_string(r.plan.backend)).member("kernel", r.plan.kernel).member("reason", r.plan.reason);
    j.member("grid_ctas", r.plan.grid_ctas);
    j.member("error", r.error).member("group", static_cast<uint64_t>(r.group)).member("heuristic", r.heuristic);
    j.member("forced_block_n", r.c.options.block_n).member("forced_cluster_m", r.c.options.cluster_m);
    j.member("forced_pingpong", r.c.options.pingpong);
    if (r.timed()) {
      j.member("ours_us_median", r.ours_median()).member("cublas_us_median", r.cublas_median());
      j.member("ours_us_min", *std::min_element(r.ours_us.begin(), r.ours_us.end()));
      j.member("cublas_us_min", *std::min_element(r.cublas_us.begin(), r.cublas_us.end()));
      j.member("ours_tflops", r.ours_tflops()).member("cublas_tflops", r.cublas_tflops());
      j.key("ours_pct_peak");
      if (r.peak > 0) j.value(100.0 * r.ours_tflops() / r.peak); else j.null();
      j.member("speedup", r.speedup());
    }
    j.member("identical_fraction", r.vs_cublas.identical_fraction());
    j.member("norm_rel_diff", r.vs_cublas.norm_rel).member("max_elem_rel_diff", r.vs_cublas.max_elem_rel);
    j.member("nonfinite", r.vs_cublas.nonfinite_x).member("close_to_cublas", r.close());
    j.member("inputs_ok", r.inputs_ok);
    // Every sample, in launch order, so other statistics and drift over the
    // run can be looked at later without re-running.
    j.member_array("ours_us", r.ours_us).member_array("cublas_us", r.cublas_us);
    j.end_object();
  }
  j.end_array();
  j.key("geomean_speedup").begin_object();
  for (const auto& [dtype, entry] : geomeans(rows)) j.member(dtype, entry.first);
  j.end_object();
  j.end_object();
  file << j.str() << "\n";
}

}  // namespace

void add_bench_options(ArgParser& parser) {
  parser.add_option("suite", "NAME", "a built-in suite (below) or all; default matmul_v2 unless --shape is given",
                    true);
  parser.add_option("shape", "MxNxK", "a shape to time (C is M x N, inner dimension K); inputs uniform(-1,1)", true);
  parser.add_option("dtype", "f16|bf16|both", "element types (default f16)");
  parser.add_option("layout", "NN|NT|TN|TT|all", "layouts, op_a then op_b, or a comma-separated list (default NN)");
  parser.add_option("repeats", "R", "timed calls per backend per round (default 20)");
  parser.add_option("rounds", "N", "rounds per case, each with fresh inputs, verified, then timed (default 1)");
  parser.add_flag("no-flush", "do not flush L2 (256 MiB write) before each timed call");
  parser.add_flag("no-peak", "skip measuring the tensor-core ceiling (the %peak column shows -)");
  parser.add_option("json", "FILE", "also write every number, with GPU, clocks and versions, to FILE");
  parser.add_option("seed", "N", "base seed of the random inputs (default " + std::to_string(kDefaultSeed) + ")");
  parser.add_option("device", "N", "CUDA device index (default 0)");
  parser.add_option("configs", "auto|all",
                    "auto: the heuristic's choice (default); all: time every built-in sm90 configuration for each "
                    "case and mark the heuristic's pick with '*'");
  std::string epilog =
      "Times are medians of CUDA-event intervals around single calls, ours and cuBLAS interleaved.\n"
      "speedup = cuBLAS time / ours; %peak = ours against the wgmma ceiling measured at start\n"
      "(tcgemm::measure_peak_tflops); =cuBLAS = fraction of outputs bit-identical to cuBLAS.\n\n"
      "suites:\n";
  for (const BenchSuite& s : bench_suites()) {
    epilog += format("  %-10s %s\n             ", s.name, s.description);
    for (size_t i = 0; i < s.shapes.size(); ++i) epilog += (i ? ", " : "") + s.shapes[i].str();
    epilog += "\n";
  }
  parser.add_epilog(epilog);
}

int run_bench(const ArgParser& parser) {
  // Options first: usage errors must not depend on having a GPU.
  std::vector<BenchCase> templates;  // dtype and layout filled in below
  std::vector<std::string> suites = parser.get_all("suite");
  if (suites.empty() && !parser.has("shape")) suites.push_back("matmul_v2");
  for (const std::string& name : suites) {
    bool found = false;
    for (const BenchSuite& s : bench_suites()) {
      if (name != "all" && name != s.name) continue;
      found = true;
      for (const Shape& shape : s.shapes) templates.push_back({shape, DType::f16, {}, s.lo, s.hi, s.name});
    }
    if (!found) return usage_error(parser, "unknown suite '" + name + "'");
  }
  for (const std::string& text : parser.get_all("shape")) {
    const auto shape = parse_shape(text);
    if (!shape || shape->m == 0 || shape->n == 0 || shape->k == 0)
      return usage_error(parser, "--shape wants MxNxK with positive sizes, got '" + text + "'");
    templates.push_back({*shape, DType::f16, {}, -1.0f, 1.0f, "--shape"});
  }
  const std::vector<DType> dtypes = parse_dtypes(parser.get("dtype", "f16"));
  if (dtypes.empty()) return usage_error(parser, "--dtype must be f16, bf16 or both");
  const std::vector<Layout> layouts = parse_layouts(parser.get("layout", "NN"));
  if (layouts.empty()) return usage_error(parser, "--layout must be NN, NT, TN, TT, a comma-separated list, or all");
  const auto repeats = parse_int(parser.get("repeats", "20"), 1, 100000);
  if (!repeats) return usage_error(parser, "--repeats wants a positive integer");
  const auto rounds = parse_int(parser.get("rounds", "1"), 1, 1000);
  if (!rounds) return usage_error(parser, "--rounds wants a positive integer");
  const auto seed = parse_int(parser.get("seed", std::to_string(kDefaultSeed)), 0, int64_t{1} << 40);
  if (!seed) return usage_error(parser, "--seed wants a non-negative integer");
  const auto device = parse_int(parser.get("device", "0"), 0, 1023);
  if (!device) return usage_error(parser, "--device wants a device index");
  const bool flush = !parser.has("no-flush");
  const std::string configs = parser.get("configs", "auto");
  if (configs != "auto" && configs != "all") return usage_error(parser, "--configs must be auto or all");

  // Open the JSON file now, so a bad path fails before minutes of timing.
  std::ofstream json;
  if (parser.has("json")) {
    json.open(parser.get("json"));
    if (!json) {
      std::fprintf(stderr, "tcgemm bench: cannot write '%s'\n", parser.get("json").c_str());
      return kExitFailure;
    }
  }
  if (!select_device(static_cast<int>(*device))) return kExitUsage;

  const DeviceInfo info = query_device_info();
  std::printf("tcgemm bench on %s (%s, %d SMs, max SM clock %d MHz, memory %d MHz), driver CUDA %s, runtime %s, "
              "cuBLAS %s, tcgemm %s\n",
              info.name.c_str(), info.arch().c_str(), info.sm_count, info.sm_clock_max_khz / 1000,
              info.mem_clock_max_khz / 1000, cuda_version_string(info.driver_version).c_str(),
              cuda_version_string(info.runtime_version).c_str(), info.cublas_version().c_str(), build_info().version);
  std::printf("method: median of %lld timed calls x %lld round(s), ours and cuBLAS interleaved, %s, seed %llu\n",
              static_cast<long long>(*repeats), static_cast<long long>(*rounds),
              flush ? "L2 flushed (256 MiB write) before each call" : "no L2 flush",
              static_cast<unsigned long long>(*seed));

  // The ceiling "%peak" is reported against, measured now on this GPU.
  std::map<std::string, double> peaks;
  for (const DType dtype : dtypes) {
    double tflops = -1.0;
    std::string why = "skipped (--no-peak)";
    if (!parser.has("no-peak")) {
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
  std::fflush(stdout);

  // Shape-major order: the dtypes and layouts of one shape run back to back,
  // which keeps their rows together in the table.
  std::vector<BenchRow> rows;
  std::vector<Options> variants{Options{}};
  if (configs == "all") {
    variants.clear();
    for (const support::KernelVariant& v : support::builtin_variants(support::device_family()))
      variants.push_back(v.options);
  }
  size_t group = 0;
  for (const BenchCase& t : templates)
    for (const DType dtype : dtypes)
      for (const Layout layout : layouts) {
        for (const Options& o : variants) {
          BenchRow row;
          row.c = t;
          row.c.dtype = dtype;
          row.c.layout = layout;
          row.c.options = o;
          row.group = group;
          row.peak = peaks[to_string(dtype)];
          rows.push_back(std::move(row));
        }
        ++group;
      }

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  size_t flush_bytes = 0;
  {
    CaseRunner runner(stream, static_cast<int>(*repeats), static_cast<int>(*rounds), flush,
                      static_cast<uint64_t>(*seed));
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

  print_table(rows);
  bool all_ok = true;
  // Slow is not a failure; a failed call or a NaN in our output is.
  for (const BenchRow& r : rows) all_ok = all_ok && r.error.empty() && r.vs_cublas.nonfinite_x == 0;
  if (configs == "all") print_config_summary(rows);
  for (const auto& [dtype, entry] : geomeans(rows))
    std::printf("geomean speedup %s: %.3fx over %d case(s)\n", dtype.c_str(), entry.first, entry.second);
  if (json.is_open()) {
    write_json(json, info, peaks, rows, suites, parser, static_cast<int>(*repeats), static_cast<int>(*rounds),
               flush_bytes, static_cast<uint64_t>(*seed));
    json.close();
    if (!json) {
      std::fprintf(stderr, "tcgemm bench: writing '%s' failed\n", parser.get("json").c_str());
      return kExitFailure;
    }
    std::printf("wrote %s\n", parser.get("json").c_str());
  }
  return all_ok ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
