// `tcgemm bench`'s settings: its options, and what they parse into. Parsed
// before anything touches a GPU, so that a usage error never depends on
// having one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "support/bandwidth.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

class ArgParser;

inline constexpr uint64_t kBenchDefaultSeed = 1234;

// One case to time: a shape, its inputs, and what ours runs with.
struct BenchCase {
  Shape shape;
  DType dtype;
  Layout layout;
  float lo, hi;        // input distribution
  std::string source;  // suite name or "--shape"
  Options options{};   // ours: automatic, or one forced configuration (--configs all)
  int64_t batch = 1;   // problems per call (--batch): a strided batch, the baselines cuBLAS's strided batched GEMM
};

struct BenchSettings {
  // The layouts a case is timed in: --layout's, else its suite's.
  std::vector<Layout> layouts_of(const BenchCase& c) const { return layouts.empty() ? std::vector<Layout>{c.layout} : layouts; }

  std::vector<BenchCase> shapes;        // the suites' shapes, then --shape's (each in its suite's layout; dtype not yet set)
  std::vector<std::string> suites;      // the suites named (matmul_v2 when neither --suite nor --shape is given)
  std::vector<std::string> shape_args;  // --shape as given
  std::vector<DType> dtypes;
  std::vector<Layout> layouts;          // --layout's; empty: each shape in its own (BenchCase::layout)
  int repeats = 20;
  int rounds = 1;
  uint64_t seed = kBenchDefaultSeed;
  int device = 0;
  support::L2Flush flush = support::L2Flush::write;  // how L2 is flushed before each timed call
  bool measure_peak = true;  // measure the tensor-core ceiling for %peak
  int64_t batch = 1;         // --batch N: every case a strided batch of N problems
  int sm_count = 0;          // --sm-count S: ours on at most S SMs (Options::sm_count; 0 all)
  bool all_configs = false;  // --configs all: every built-in configuration of the family
  std::string only;          // --only: of those, the ones whose label contains this (empty: all)
  std::vector<Schedule> schedules;  // --schedule: every row timed again under each of these
  bool chain = false;        // --chain: the dependent-GEMM chain instead of the cases
  FusedEpilogue fused;       // --activation, --bias: ours runs fused, and plain beside it
  std::optional<std::string> json_path;  // --json FILE
  std::optional<std::string> plot_path;  // --plot FILE.svg
};

// The picture of a run (--plot) is drawn by scripts/plot_bench.py from the
// run's JSON record: the script's path ($TCGEMM_PLOT_SCRIPT, else the source
// tree's), why it cannot run (empty when it can), and running it.
std::string plot_script();
std::string plot_unavailable();
// Draws `json` into `svg`; empty on success, else what failed.
std::string draw_plot(const std::string& json, const std::string& svg);

// How a run flushed L2, for its header: "L2 flushed (256 MiB write) before
// each <unit>", or "no L2 flush".
std::string flush_description(support::L2Flush mode, const char* unit);

// Parses bench's options (declared by add_bench_options). Empty on success,
// otherwise the usage error to print.
std::string parse_bench_settings(const ArgParser& parser, BenchSettings* settings);

}  // namespace tcgemm::cli
