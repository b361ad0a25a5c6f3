#include "bench_settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <unistd.h>

#include "arg_parser.hpp"
#include "commands.hpp"
#include "suites.hpp"

namespace tcgemm::cli {

void add_bench_options(ArgParser& parser) {
  parser.add_option("suite", "NAME", "a built-in suite (below) or all; default matmul_v2 unless --shape is given",
                    true);
  parser.add_option("shape", "MxNxK", "a shape to time (C is M x N, inner dimension K); inputs uniform(-1,1)", true);
  parser.add_option("dtype", "f16|bf16|both", "element types (default f16)");
  parser.add_option("layout", "NN|NT|TN|TT|all", "layouts, op_a then op_b, or a comma-separated list (default: NN for --shape and the suites matmul_v2, large and prefill8k; NT for the model suites llm, decode, small, rows and narrow)");
  parser.add_option("repeats", "R", "timed calls per backend per round (default 20)");
  parser.add_option("batch", "N",
                    "time every shape as a strided batch of N problems in one call (tcgemm's batched kernel "
                    "against cublasGemmStridedBatchedEx; default 1: plain calls)");
  parser.add_option("rounds", "N", "rounds per case, each with fresh inputs, verified, then timed (default 1)");
  parser.add_option("sm-count", "S",
                    "ours on at most S SMs (Options::sm_count: the grid and the choice as on a device of S SMs, "
                    "the rest left to other work; default 0: all)");
  parser.add_option("flush", "write|read|none",
                    "how L2 is emptied before each timed call: write (default) a 256 MiB memset, which leaves L2 "
                    "full of dirty lines that a memory-bound call writes back as it reads (the leaderboard's and "
                    "do_bench's way); read: a 256 MiB read, which leaves clean lines (as a model's layer finds L2 "
                    "after the previous layer's weight reads); none: no flush");
  parser.add_flag("no-flush", "the same as --flush none");
  parser.add_flag("no-peak", "skip measuring the tensor-core ceiling (the %peak column shows -)");
  parser.add_option("json", "FILE", "also write every number, with GPU, clocks and versions, to FILE");
  parser.add_option("plot", "FILE.svg",
                    "also draw the run as an SVG picture (python3 and the renderer: the script $TCGEMM_PLOT_SCRIPT "
                    "names, else share/tcgemm/bench_plot.py of an installed tool, else the source tree's)");
  parser.add_option("seed", "N", "base seed of the random inputs (default " + std::to_string(kBenchDefaultSeed) + ")");
  parser.add_option("device", "N", "CUDA device index (default 0)");
  parser.add_flag("chain",
                  "time a decoding MLP as a chain of dependent GEMMs instead (8 layers of 4096 -> 14336 -> 4096, "
                  "M = 1, 8, 32, 64; one --dtype, default bf16): tcgemm with and without programmatic dependent "
                  "launch, and cuBLAS");
  parser.add_option("configs", "auto|all",
                    "auto: the heuristic's choice (default); all: time every built-in configuration of the "
                    "device's kernel family for each case, then the heuristic's choice itself (marked '*'; "
                    "'=' marks the configuration that is the same kernel)");
  parser.add_option("only", "TEXT",
                    "with --configs all: time only the configurations whose label contains TEXT, beside the "
                    "automatic choice (sm90 labels: block_n=W cluster_m=C [pingpong] [block_m=H] [cluster_n=2] "
                    "[swap_ab], e.g. --only swap_ab, or 'block_n=16 ' with the space to leave out 160; sm100: "
                    "block_n=W clc|persistent [single-CTA] [block_m=64] [swap_ab])");
  parser.add_option("schedule", "persistent|counted|clc",
                    "also time every row (each forced configuration and the automatic choice) with "
                    "Options::schedule set to this, a row beside it; a comma-separated list for several "
                    "(counted: sm90, where the tile can count, else the row runs persistent; clc: sm100; the "
                    "kernel column shows which schedule ran)");
  add_fused_epilogue_options(parser,
                             "time tcgemm with a fused epilogue (a fourth side, tcgemm without it, timed beside it; "
                             "cuBLAS runs the GEMM alone)");
  std::string epilog =
      "Times are medians of CUDA-event intervals around single calls, ours and cuBLAS interleaved.\n"
      "cuBLAS is cublasGemmEx as PyTorch sets it up for torch.matmul (its own workspace, reduced-precision\n"
      "reductions allowed); strict is cuBLAS as tcgemm's fallback calls it (reductions disallowed).\n"
      "speedup = cuBLAS time / ours; %peak = ours against the wgmma ceiling measured at start\n"
      "(tcgemm::measure_peak_tflops); %HBM = ours' GB/s against a 1 GiB read measured at start; %read =\n"
      "the time of a read of the call's own bytes, timed beside the automatic choice, over ours;\n"
      "=cuBLAS = fraction of outputs bit-identical to strict cuBLAS.\n"
      "The JSON record is described in docs/BENCH_JSON.md.\n\n"
      "suites:\n";
  for (const BenchSuite& s : bench_suites()) {
    epilog += format("  %-10s %s\n             ", s.name, s.description);
    for (size_t i = 0; i < s.shapes.size(); ++i) epilog += (i ? ", " : "") + s.shapes[i].str();
    epilog += "\n";
  }
  parser.add_epilog(epilog);
}

std::string flush_description(support::L2Flush mode, const char* unit) {
  if (mode == support::L2Flush::none) return "no L2 flush";
  return format("L2 flushed (256 MiB %s) before each %s", support::to_string(mode), unit);
}

namespace {
// Empty where a file can be made at `path` as far as its directory tells
// (it exists and is writable); otherwise why not. Checked with the options,
// before any GPU work, so that minutes of timing do not end in a file that
// cannot be written.
std::string unwritable_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return "no directory '" + dir + "' to write '" + path + "' in";
  if (access(dir.c_str(), W_OK) != 0) return "the directory '" + dir + "' is not writable";
  return {};
}
}  // namespace

std::string parse_bench_settings(const ArgParser& parser, BenchSettings* settings) {
  BenchSettings& s = *settings;
  s.suites = parser.get_all("suite");
  if (s.suites.empty() && !parser.has("shape")) s.suites.push_back("matmul_v2");
  std::set<std::string> named;
  for (const std::string& name : s.suites) {
    if (!named.insert(name).second) return "--suite " + name + " is named twice";
    bool found = false;
    for (const BenchSuite& suite : bench_suites()) {
      if (name != "all" && name != suite.name) continue;
      found = true;
      // (Each suite in its own layout unless --layout says otherwise: NT for the model suites.)
      const Layout layout = parse_layouts(suite.default_layout).front();
      for (const Shape& shape : suite.shapes)
        s.shapes.push_back({shape, DType::f16, layout, suite.lo, suite.hi, suite.name});
    }
    if (!found) return "unknown suite '" + name + "'";
  }
  if (named.count("all") && named.size() > 1) return "--suite all already holds every suite";
  s.shape_args = parser.get_all("shape");
  std::set<std::string> shapes_named;
  for (const std::string& text : s.shape_args) {
    const auto shape = parse_shape(text);
    if (!shape || shape->m == 0 || shape->n == 0 || shape->k == 0)
      return "--shape wants MxNxK with positive sizes, got '" + text + "'";
    if (!shapes_named.insert(shape->str()).second) return "--shape " + shape->str() + " is named twice";
    s.shapes.push_back({*shape, DType::f16, Layout{Op::N, Op::N}, -1.0f, 1.0f, "--shape"});
  }
  s.chain = parser.has("chain");
  if (s.chain && (parser.has("suite") || parser.has("shape") || parser.has("configs") || parser.has("json") ||
                  parser.has("plot") || parser.has("layout") || parser.has("rounds") || parser.has("no-peak")))
    return "--chain times its own fixed chain (NT, --repeats chains a variant): it takes no --suite, --shape, "
           "--configs, --json, --plot, --layout, --rounds or --no-peak";
  s.dtypes = parse_dtypes(parser.get("dtype", s.chain ? "bf16" : "f16"));
  if (s.dtypes.empty()) return "--dtype must be f16, bf16 or both";
  if (s.chain && s.dtypes.size() > 1) return "--chain times one dtype: give --dtype f16 or bf16";
  // Without --layout each shape runs in its suite's layout (NT for the model
  // suites, NN for the others and --shape): s.layouts stays empty.
  if (parser.has("layout")) {
    s.layouts = parse_layouts(parser.get("layout"));
    if (s.layouts.empty()) return "--layout must be NN, NT, TN, TT, a comma-separated list of distinct ones, or all";
  }
  const auto repeats = parse_int(parser.get("repeats", "20"), 1, 100000);
  if (!repeats) return "--repeats wants an integer from 1 to 100000";
  const auto rounds = parse_int(parser.get("rounds", "1"), 1, 1000);
  if (!rounds) return "--rounds wants an integer from 1 to 1000";
  const auto seed = parse_int(parser.get("seed", std::to_string(kBenchDefaultSeed)), 0, int64_t{1} << 40);
  if (!seed) return "--seed wants an integer from 0 to 2^40";
  const auto device = parse_int(parser.get("device", "0"), 0, 1023);
  if (!device) return "--device wants a device index from 0 to 1023";
  const auto batch = parse_int(parser.get("batch", "1"), 1, 65536);
  if (!batch) return "--batch wants a number of problems from 1 to 65536";
  if (s.chain && *batch > 1) return "--chain times its own fixed chain: it takes no --batch";
  s.batch = *batch;
  // Every buffer's elements in 64 bits, with room to spare: no operand of
  // 2^44 elements (32 TiB) or more, a batch's included.
  for (const BenchCase& c : s.shapes) {
    const int64_t largest = std::max({c.shape.m * c.shape.k, c.shape.k * c.shape.n, c.shape.m * c.shape.n});
    if (largest > (int64_t{1} << 44) / s.batch)
      return "--shape " + c.shape.str() + (s.batch > 1 ? " in batches of " + std::to_string(s.batch) : "") +
             " needs an operand of 2^44 elements or more: no GPU holds it";
  }
  const auto sm_count = parse_int(parser.get("sm-count", "0"), 0, 1 << 20);
  if (!sm_count) return "--sm-count wants a number of SMs (0: all)";
  if (s.chain && *sm_count > 0) return "--chain times its own fixed chain: it takes no --sm-count";
  s.sm_count = static_cast<int>(*sm_count);
  const std::string configs = parser.get("configs", "auto");
  if (configs != "auto" && configs != "all") return "--configs must be auto or all";
  s.repeats = static_cast<int>(*repeats);
  s.rounds = static_cast<int>(*rounds);
  s.seed = static_cast<uint64_t>(*seed);
  s.device = static_cast<int>(*device);
  const std::string flush = parser.get("flush", parser.has("no-flush") ? "none" : "write");
  if (parser.has("no-flush") && flush != "none") return "--no-flush and --flush " + flush + " contradict each other";
  if (flush == "write") s.flush = support::L2Flush::write;
  else if (flush == "read") s.flush = support::L2Flush::read;
  else if (flush == "none") s.flush = support::L2Flush::none;
  else return "--flush must be write, read or none";
  s.measure_peak = !parser.has("no-peak");
  s.all_configs = configs == "all";
  if (parser.has("only")) {
    if (s.chain) return "--chain times its own fixed chain: it takes no --only";
    if (!s.all_configs) return "--only picks among the configurations of --configs all: add --configs all";
    s.only = parser.get("only");
    if (s.only.empty()) return "--only wants a non-empty part of a configuration's label";
  }
  if (parser.has("schedule")) {
    if (s.chain) return "--chain times its own fixed chain: it takes no --schedule";
    std::string list = parser.get("schedule");
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(',', start), list.size());
      const std::string name = list.substr(start, end - start);
      const Schedule schedule = name == "persistent" ? Schedule::persistent
                                : name == "counted"  ? Schedule::counted
                                : name == "clc"      ? Schedule::cluster_launch_control
                                                     : Schedule::automatic;
      if (schedule == Schedule::automatic)
        return "--schedule wants persistent, counted or clc (or a comma-separated list), got '" + name + "'";
      if (std::ranges::find(s.schedules, schedule) != s.schedules.end()) return "--schedule names " + name + " twice";
      if (schedule == Schedule::cluster_launch_control && s.sm_count > 0)
        return "--schedule clc does not bound its grid: it takes no --sm-count";
      s.schedules.push_back(schedule);
      start = end + 1;
    }
  }
  if (std::string why = parse_fused_epilogue(parser, &s.fused); !why.empty()) return why;
  if (s.chain && s.fused.any()) return "--chain takes no --activation or --bias";
  if (parser.has("json")) {
    s.json_path = parser.get("json");
    if (s.json_path->empty()) return "--json wants a file name";
    if (std::string why = unwritable_directory(*s.json_path); !why.empty()) return "--json: " + why;
  }
  if (parser.has("plot")) {
    s.plot_path = parser.get("plot");
    if (s.plot_path->empty()) return "--plot wants a file name (.svg)";
    if (!s.plot_path->ends_with(".svg")) return "--plot draws an SVG picture: give a file name ending in .svg";
    if (std::string why = unwritable_directory(*s.plot_path); !why.empty()) return "--plot: " + why;
    if (std::string why = plot_unavailable(); !why.empty()) return "--plot: " + why;
  }
  return {};
}

}  // namespace tcgemm::cli

namespace tcgemm::cli {

namespace {

// 'text' for the shell: single quotes, each ' as '\''.
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string plot_script() {
  if (const char* env = std::getenv("TCGEMM_PLOT_SCRIPT"); env != nullptr && *env != '\0') return env;
  // An installed tool: the renderer that `cmake --install` put beside it.
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path installed = self.parent_path() / TCGEMM_PLOT_FROM_BIN;
    if (std::filesystem::is_regular_file(installed, error)) return installed.lexically_normal().string();
  }
  return TCGEMM_PLOT_SCRIPT;
}

std::string plot_unavailable() {
  if (std::system("command -v python3 > /dev/null 2>&1") != 0) return "needs python3 on PATH";
  if (std::FILE* f = std::fopen(plot_script().c_str(), "r")) {
    std::fclose(f);
    return {};
  }
  return "cannot read the renderer " + plot_script() +
         " (set TCGEMM_PLOT_SCRIPT to the source tree's scripts/plot_bench.py)";
}

std::string draw_plot(const std::string& json, const std::string& svg) {
  const std::string command =
      "python3 " + shell_quote(plot_script()) + " " + shell_quote(json) + " " + shell_quote(svg);
  // Our table first: the renderer's own line must not land inside its last
  // row when stdout is a file (fully buffered).
  std::fflush(stdout);
  const int status = std::system(command.c_str());
  return status == 0 ? std::string() : "'" + command + "' failed (status " + std::to_string(status) + ")";
}

}  // namespace tcgemm::cli
