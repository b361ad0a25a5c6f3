// What `tcgemm bench` reports: a row per case (and configuration, with
// --configs all), the table, the heuristic-against-best summary, the
// geometric means and the JSON record.
#pragma once

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bench_settings.hpp"
#include "cli_common.hpp"
#include "device_info.hpp"
#include "support/compare.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

// The key of the HBM read ceiling (GB/s) among bench's measured peaks.
inline constexpr const char* kHbmPeakKey = "hbm_read_gbps";

struct BenchRow {
  BenchCase c;
  Plan plan;                        // ours, from the verification call
  std::string error;                // a failed call: no timings
  // GPU time per call (us): ours, cuBLAS as torch configures it (the
  // baseline) and cuBLAS as tcgemm's fallback configures it ("strict").
  std::vector<double> ours_us, cublas_us, strict_us;
  // With a fused epilogue (--activation, --bias), ours is the fused call and
  // plain_us the same call without it, timed in the same rotation.
  std::vector<double> plain_us;
  // A plain read of min_bytes() (support::HbmRead), timed in the same
  // rotation on the automatic choice's row when the HBM ceiling is measured:
  // the ceiling at this size.
  std::vector<double> read_us;
  // Host time of one call (entry to return, on the CPU clock): tcgemm's
  // kernel path, and cuBLAS through tcgemm's fallback (tcgemm's checks plus
  // cublasGemmEx).
  std::vector<double> ours_host_us, cublas_host_us;
  // Against strict cuBLAS, the worst round (lowest identical fraction); with
  // a fused epilogue, of the plain call (cuBLAS computes no epilogue).
  support::CompareStats vs_cublas;
  support::CompareStats vs_torch_config;   // against the baseline, the worst round (CompareStats::worse_than)
  int64_t fused_nonfinite = 0;              // NaN/Inf in the fused call's output (any round)
  bool inputs_ok = true;
  size_t group = 0;                 // rows of one (shape, dtype, layout) share it
  bool heuristic = false;           // the automatic choice's own row (options not forced)
  // A forced configuration (--configs all) for a call no tcgemm kernel takes
  // (the automatic choice falls back to cuBLAS: operands TMA cannot load):
  // nothing to time, and no failure; the row is dropped from the report.
  bool not_applicable = false;
  bool same_as_pick = false;        // --configs all: a forced configuration that is the same kernel as the pick
  double peak = -1.0;               // TFLOP/s ceiling for the dtype, < 0 if unknown
  double hbm = -1.0;                // GB/s HBM read ceiling, < 0 if unknown

  bool timed() const { return error.empty() && !ours_us.empty(); }
  double ours_median() const { return median(ours_us); }
  double cublas_median() const { return median(cublas_us); }
  double ours_host_median() const { return ours_host_us.empty() ? -1.0 : median(ours_host_us); }
  // (Every problem of a --batch call counts.)
  double flops() const { return c.shape.flops() * static_cast<double>(c.batch); }
  double ours_tflops() const { return flops() / (ours_median() * 1e-6) / 1e12; }
  double cublas_tflops() const { return flops() / (cublas_median() * 1e-6) / 1e12; }
  double strict_median() const { return median(strict_us); }
  double speedup() const { return cublas_median() / ours_median(); }
  double speedup_vs_strict() const { return strict_median() / ours_median(); }
  bool fused() const { return !plain_us.empty(); }
  // What the fused epilogue costs: fused time / plain time - 1.
  double epilogue_overhead() const { return ours_median() / median(plain_us) - 1.0; }
  // The bytes a GEMM must move at least: A and B read, C written, once
  // (for each problem of a batch).
  double min_bytes() const {
    const double m = static_cast<double>(c.shape.m), n = static_cast<double>(c.shape.n),
                 k = static_cast<double>(c.shape.k);
    return 2.0 * (m * k + k * n + m * n) * static_cast<double>(c.batch);
  }
  double ours_gbps() const { return min_bytes() / (ours_median() * 1e-6) / 1e9; }
  // Ours against the same-size read: its time over ours, in percent (< 0: not timed).
  double pct_of_read() const { return read_us.empty() ? -1.0 : 100.0 * median(read_us) / ours_median(); }
  bool close() const { return vs_cublas.finite() && vs_cublas.norm_rel < support::normwise_tolerance(c.dtype); }
  // Empty unless something needs a second look (an error, a warning).
  std::string warning() const;
};

// The table: times in microseconds, TFLOP/s from the medians.
void print_table(const std::vector<BenchRow>& rows);
// With a fused epilogue: per case, the plain and fused times and what the
// epilogue costs, and its geometric mean per dtype.
void print_epilogue_overhead(const std::vector<BenchRow>& rows);
// --configs all: per case, the heuristic's pick against the fastest configuration.
void print_config_summary(const std::vector<BenchRow>& rows);
// "geomean speedup f16: 1.012x over 9 case(s)", per dtype.
void print_geomeans(const std::vector<BenchRow>& rows);

// Everything measured, with the device, the versions and the settings.
void write_json(std::ostream& out, const DeviceInfo& device, const std::map<std::string, double>& peaks,
                const std::vector<BenchRow>& rows, const BenchSettings& settings, size_t flush_bytes);

}  // namespace tcgemm::cli
