#include "bench_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "json_writer.hpp"

namespace tcgemm::cli {

namespace {

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Per dtype, over what users get (the automatic choice; with --configs all,
// the rows the heuristic picks): the geometric means of the baseline's time
// over ours and of strict cuBLAS's over ours.
struct Geomean {
  double speedup = 0.0, vs_strict = 0.0;
  int cases = 0;
};
std::map<std::string, Geomean> geomeans(const std::vector<BenchRow>& rows) {
  std::map<std::string, Geomean> logs;
  for (const BenchRow& r : rows) {
    if (!r.timed() || !r.heuristic) continue;
    Geomean& g = logs[to_string(r.c.dtype)];
    g.speedup += std::log(r.speedup());
    g.vs_strict += std::log(r.speedup_vs_strict());
    ++g.cases;
  }
  for (auto& [dtype, g] : logs) {
    g.speedup = std::exp(g.speedup / g.cases);
    g.vs_strict = std::exp(g.vs_strict / g.cases);
  }
  return logs;
}

}  // namespace

std::string BenchRow::warning() const {
  if (!error.empty()) return "ERROR: " + error;
  if (!inputs_ok) return "WARN: inputs not random";
  if (vs_cublas.nonfinite_x > 0) return format("WARN: %lld NaN/Inf", static_cast<long long>(vs_cublas.nonfinite_x));
  if (fused_nonfinite > 0) return format("WARN: %lld NaN/Inf (fused)", static_cast<long long>(fused_nonfinite));
  if (vs_cublas.nonfinite_ref > 0) return "WARN: cuBLAS NaN/Inf";
  if (vs_torch_config.nonfinite_ref > 0) return "WARN: cuBLAS (torch's configuration) NaN/Inf";
  if (!close()) return format("WARN: rel diff %.1e", vs_cublas.norm_rel);
  return "";
}

// Times in microseconds, TFLOP/s from the medians; the last column is empty
// unless something needs a second look.
void print_table(const std::vector<BenchRow>& rows) {
  const char* head = "%-18s %-5s %-3s %-28s %10s %10s %8s %8s %6s %7s %5s %5s %8s %10s %9s %8s %7s  %s\n";
  std::printf(head, "shape", "dtype", "lay", "kernel", "ours us", "cuBLAS us", "ours TF", "cuBLAS TF", "%peak",
              "GB/s", "%HBM", "%read", "speedup", "strict us", "vs strict", "=cuBLAS", "host us", "");
  // With --configs all, '*' marks the automatic choice's row and '=' the
  // forced configuration that is the same kernel.
  const bool all_configs =
      std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.c.options.block_n != 0; });
  for (const BenchRow& r : rows) {
    std::string kernel = r.plan.status == Status::ok ? short_kernel(r.plan) : "rejected";
    if (all_configs) kernel = (r.heuristic ? "*" : r.same_as_pick ? "=" : " ") + kernel;
    if (!r.timed()) {
      std::printf(head, r.c.shape.str().c_str(), to_string(r.c.dtype), r.c.layout.str().c_str(), kernel.c_str(), "-",
                  "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", r.warning().c_str());
      continue;
    }
    const std::string peak = r.peak > 0 ? format("%.1f", 100.0 * r.ours_tflops() / r.peak) : "-";
    // Achieved bandwidth (the least bytes the GEMM moves over its time) against the HBM read ceiling.
    const std::string hbm = r.hbm > 0 ? format("%.0f", 100.0 * r.ours_gbps() / r.hbm) : "-";
    // ... and against a plain read of as many bytes, timed beside it.
    const std::string read = r.pct_of_read() > 0 ? format("%.0f", r.pct_of_read()) : "-";
    std::printf(head, r.c.shape.str().c_str(), to_string(r.c.dtype), r.c.layout.str().c_str(), kernel.c_str(),
                format("%.1f", r.ours_median()).c_str(), format("%.1f", r.cublas_median()).c_str(),
                format("%.1f", r.ours_tflops()).c_str(), format("%.1f", r.cublas_tflops()).c_str(), peak.c_str(),
                format("%.0f", r.ours_gbps()).c_str(), hbm.c_str(), read.c_str(), format("%.3fx", r.speedup()).c_str(),
                format("%.1f", r.strict_median()).c_str(), format("%.3fx", r.speedup_vs_strict()).c_str(),
                format("%.1f%%", 100.0 * r.vs_cublas.identical_fraction()).c_str(),
                r.ours_host_us.empty() ? "-" : format("%.1f", r.ours_host_median()).c_str(), r.warning().c_str());
  }
}

void print_epilogue_overhead(const std::vector<BenchRow>& rows) {
  std::printf("\nfused epilogue cost (fused time / plain time - 1, medians):\n");
  std::map<std::string, std::pair<double, int>> logs;
  for (const BenchRow& r : rows) {
    if (!r.timed() || !r.fused()) continue;
    std::printf("  %-18s %-5s %-3s %-28s plain %9.1f us  fused %9.1f us  %+6.2f%%\n", r.c.shape.str().c_str(),
                to_string(r.c.dtype), r.c.layout.str().c_str(), short_kernel(r.plan).c_str(), median(r.plain_us),
                r.ours_median(), 100.0 * r.epilogue_overhead());
    if (!r.heuristic) continue;
    auto& [sum, count] = logs[to_string(r.c.dtype)];
    sum += std::log1p(r.epilogue_overhead());
    ++count;
  }
  for (const auto& [dtype, g] : logs)
    std::printf("geomean fused epilogue cost %s: %+.2f%% over %d case(s)\n", dtype.c_str(),
                100.0 * std::expm1(g.first / g.second), g.second);
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

void print_geomeans(const std::vector<BenchRow>& rows) {
  for (const auto& [dtype, g] : geomeans(rows))
    std::printf("geomean speedup %s: %.3fx over %d case(s) (vs strict cuBLAS %.3fx)\n", dtype.c_str(), g.speedup,
                g.cases, g.vs_strict);
}

void write_json(std::ostream& out, const DeviceInfo& d, const std::map<std::string, double>& peaks,
                const std::vector<BenchRow>& rows, const BenchSettings& settings, size_t flush_bytes) {
  const BuildInfo build = build_info();
  JsonWriter j;
  j.begin_object();
  j.member("tool", "tcgemm bench").member("schema_version", 2).member("timestamp", now_iso8601());
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
  for (const std::string& s : settings.suites) j.value(s);
  j.end_array();
  j.key("shapes").begin_array();
  for (const std::string& s : settings.shape_args) j.value(s);
  j.end_array();
  j.member("repeats", settings.repeats).member("rounds", settings.rounds).member("batch", settings.batch);
  j.member("sm_count", settings.sm_count);
  j.member("l2_flush", support::to_string(settings.flush)).member("l2_flush_bytes", static_cast<uint64_t>(flush_bytes));
  j.member("seed", settings.seed).member("statistic", "median");
  j.member("activation", to_string(settings.fused.activation));
  j.member("bias", settings.fused.bias_name());
  j.member("baseline", "cublasGemmEx configured as PyTorch configures it (its own workspace, reduced-precision "
                       "reductions allowed); strict: as tcgemm's fallback calls it (disallowed)");
  j.end_object();
  j.key("peak_tflops").begin_object();
  for (const auto& [dtype, tflops] : peaks) {
    if (dtype == kHbmPeakKey) continue;
    j.key(dtype);
    if (tflops > 0) j.value(tflops); else j.null();
  }
  j.end_object();
  j.key(kHbmPeakKey);
  if (const auto hbm = peaks.find(kHbmPeakKey); hbm != peaks.end() && hbm->second > 0) j.value(hbm->second); else j.null();
  j.key("results").begin_array();
  for (const BenchRow& r : rows) {
    j.begin_object();
    j.member("source", r.c.source).member("m", r.c.shape.m).member("n", r.c.shape.n).member("k", r.c.shape.k);
    j.member("batch", r.c.batch);
    j.member("dtype", to_string(r.c.dtype)).member("layout", r.c.layout.str());
    j.member("input_low", static_cast<double>(r.c.lo)).member("input_high", static_cast<double>(r.c.hi));
    j.member("backend", to_string(r.plan.backend)).member("kernel", r.plan.kernel).member("reason", r.plan.reason);
    j.member("grid_ctas", r.plan.grid_ctas).member("path", to_string(r.plan.path));
    j.key("config").begin_object();
    const KernelConfig& k = r.plan.config;
    j.member("block_m", k.block_m).member("block_n", k.block_n).member("block_k", k.block_k);
    j.member("stages", k.stages).member("cluster_m", k.cluster_m).member("cluster_n", k.cluster_n);
    j.member("pingpong", k.pingpong).member("swap_ab", k.swap_ab);
    j.member("schedule", to_string(k.schedule));
    j.end_object();
    j.member("error", r.error).member("group", static_cast<uint64_t>(r.group)).member("heuristic", r.heuristic);
    j.member("same_as_pick", r.same_as_pick);
    j.member("forced_block_n", r.c.options.block_n).member("forced_cluster_m", r.c.options.cluster_m);
    j.member("forced_pingpong", r.c.options.pingpong).member("forced_block_m", r.c.options.block_m);
    j.member("forced_cluster_n", r.c.options.cluster_n).member("forced_swap_ab", r.c.options.swap_ab);
    j.member("forced_schedule", to_string(r.c.options.schedule));
    if (r.timed()) {
      j.member("ours_us_median", r.ours_median()).member("cublas_us_median", r.cublas_median());
      j.member("ours_us_min", *std::min_element(r.ours_us.begin(), r.ours_us.end()));
      j.member("cublas_us_min", *std::min_element(r.cublas_us.begin(), r.cublas_us.end()));
      j.member("ours_tflops", r.ours_tflops()).member("cublas_tflops", r.cublas_tflops());
      j.key("ours_pct_peak");
      if (r.peak > 0) j.value(100.0 * r.ours_tflops() / r.peak); else j.null();
      j.member("ours_gbps", r.ours_gbps());
      j.key("ours_pct_hbm");
      if (r.hbm > 0) j.value(100.0 * r.ours_gbps() / r.hbm); else j.null();
      j.key("read_us_median");
      if (!r.read_us.empty()) j.value(median(r.read_us)); else j.null();
      j.key("ours_pct_read");
      if (!r.read_us.empty()) j.value(r.pct_of_read()); else j.null();
      j.member("speedup", r.speedup());
      j.member("cublas_strict_us_median", r.strict_median()).member("speedup_vs_strict", r.speedup_vs_strict());
      if (r.fused()) j.member("tcgemm_plain_us_median", median(r.plain_us)).member("epilogue_overhead", r.epilogue_overhead());
      if (!r.ours_host_us.empty()) {
        j.member("ours_host_us_median", r.ours_host_median());
        j.member("cublas_host_us_median", median(r.cublas_host_us));
      }
    }
    // The comparisons with cuBLAS where the row got that far; null where it
    // failed first (an error row compared nothing, and must not read as equal).
    const bool compared = r.vs_cublas.count > 0;
    const auto compared_member = [&](const char* name, auto v) {
      j.key(name);
      if (compared) j.value(v); else j.null();
    };
    compared_member("identical_fraction", r.vs_cublas.identical_fraction());
    compared_member("norm_rel_diff", r.vs_cublas.norm_rel);
    compared_member("max_elem_rel_diff", r.vs_cublas.max_elem_rel);
    compared_member("nonfinite", r.vs_cublas.nonfinite_x);
    compared_member("close_to_cublas", r.close());
    compared_member("identical_fraction_vs_baseline", r.vs_torch_config.identical_fraction());
    j.member("inputs_ok", r.inputs_ok);
    if (r.fused()) j.member("fused_nonfinite", r.fused_nonfinite);
    // Every sample, in launch order, so other statistics and drift over the
    // run can be looked at later without re-running.
    j.member_array("ours_us", r.ours_us).member_array("cublas_us", r.cublas_us);
    j.member_array("cublas_strict_us", r.strict_us);
    if (r.fused()) j.member_array("tcgemm_plain_us", r.plain_us);
    if (!r.read_us.empty()) j.member_array("read_us", r.read_us);
    j.end_object();
  }
  j.end_array();
  j.key("geomean_speedup").begin_object();
  for (const auto& [dtype, g] : geomeans(rows)) j.member(dtype, g.speedup);
  j.end_object();
  j.key("geomean_speedup_vs_strict").begin_object();
  for (const auto& [dtype, g] : geomeans(rows)) j.member(dtype, g.vs_strict);
  j.end_object();
  j.end_object();
  out << j.str() << "\n";
}

}  // namespace tcgemm::cli
