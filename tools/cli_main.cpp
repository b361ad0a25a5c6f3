// tcgemm: the command line front end of the library.
//
//   tcgemm info     the GPU, the software stack and what this build contains
//   tcgemm check    correctness sweep against the reference GEMM and cuBLAS
//   tcgemm bench    timing against cuBLAS, interleaved, L2 flushed
//
// Options are parsed and validated before any CUDA call, so `--help` and
// usage errors work on a machine without a GPU.
#include <cstdio>
#include <cstring>
#include <string>

#include "arg_parser.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "support/cuda_error.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {
namespace {

struct Command {
  const char* name;
  const char* summary;
  void (*add_options)(ArgParser&);
  int (*run)(const ArgParser&);
};

constexpr Command kCommands[] = {
    {"info", "Show the GPU, driver, CUDA runtime and cuBLAS versions, and what this tcgemm build contains.",
     add_info_options, run_info},
    {"check", "Correctness sweep: tcgemm against the reference GEMM and cuBLAS over dtypes, layouts and shapes.",
     add_check_options, run_check},
    {"bench", "Time tcgemm against cuBLAS (interleaved, L2 flushed, median of repeats) on built-in suites or given "
              "shapes.",
     add_bench_options, run_bench},
};

std::string main_usage() {
  std::string out =
      "usage: tcgemm <command> [options]\n"
      "       tcgemm <command> --help\n\n"
      "Tensor-core GEMM for Hopper (sm_90a) and Blackwell (sm_100a): C = alpha * op(A) @ op(B) + beta * C (fp16/bf16, fp32 accumulation).\n\n"
      "commands:\n";
  for (const Command& c : kCommands) out += format("  %-7s %s\n", c.name, c.summary);
  out += "\n  --version  print the library version\n  --help     print this message\n\n"
         "exit status: 0 success, 1 a check, a bench's agreement with cuBLAS or a CUDA call failed, 2 bad usage\n"
         "or no CUDA device\n";
  return out;
}

}  // namespace
}  // namespace tcgemm::cli

int main(int argc, char** argv) {
  using namespace tcgemm::cli;
  if (argc < 2) {
    std::fputs(main_usage().c_str(), stderr);
    return kExitUsage;
  }
  const std::string word = argv[1];
  if (word == "--help" || word == "-h" || word == "help") {
    // "tcgemm help bench" (or --help bench) reads as naturally as "tcgemm bench --help".
    if (argc > 3) {
      std::fprintf(stderr, "tcgemm: %s takes one command name at most, got '%s' after '%s'\n\n%s", word.c_str(),
                   argv[3], argv[2], main_usage().c_str());
      return kExitUsage;
    }
    if (argc == 3) {
      for (const Command& c : kCommands) {
        if (std::strcmp(c.name, argv[2]) == 0) {
          ArgParser parser(c.name, c.summary);
          c.add_options(parser);
          std::fputs(parser.usage().c_str(), stdout);
          return kExitOk;
        }
      }
      std::fprintf(stderr, "tcgemm: unknown command '%s'\n\n%s", argv[2], main_usage().c_str());
      return kExitUsage;
    }
    std::fputs(main_usage().c_str(), stdout);
    return kExitOk;
  }
  if (word == "--version") {
    if (argc > 2) {
      std::fprintf(stderr, "tcgemm: --version takes no argument, got '%s'\n", argv[2]);
      return kExitUsage;
    }
    const tcgemm::BuildInfo build = tcgemm::build_info();
    std::printf("tcgemm %s (%s)\n", build.version, build.cuda_archs);
    return kExitOk;
  }
  for (const Command& c : kCommands) {
    if (word != c.name) continue;
    ArgParser parser(c.name, c.summary);
    c.add_options(parser);
    std::string error;
    if (!parser.parse(argc - 2, argv + 2, error)) return usage_error(parser, error);
    if (parser.help_requested()) {
      std::fputs(parser.usage().c_str(), stdout);
      return kExitOk;
    }
    try {
      return c.run(parser);
    } catch (const tcgemm::support::CudaError& e) {
      // A CUDA failure inside a shared helper (buffers, fills, comparisons):
      // exit as CHECK_CUDA does, since nothing measured after it can be trusted.
      std::fflush(stdout);
      std::fprintf(stderr, "tcgemm: %s\n", e.what());
      return kExitFailure;
    }
  }
  std::fprintf(stderr, "tcgemm: unknown command '%s'\n\n%s", word.c_str(), main_usage().c_str());
  return kExitUsage;
}
