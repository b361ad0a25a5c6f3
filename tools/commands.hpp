// The subcommands. Each declares its options on an ArgParser and runs from
// the parsed result; cli_main.cpp only routes argv to them.
#pragma once

#include <cstdint>
#include <string>

namespace tcgemm::cli {

class ArgParser;

void add_info_options(ArgParser& parser);
int run_info(const ArgParser& parser);

void add_check_options(ArgParser& parser);
int run_check(const ArgParser& parser);
// check --fuzz: `cases` random cases from `seed` on `device` (fuzz.cpp).
int run_fuzz(int64_t cases, uint64_t seed, int device, bool all_configs, const std::string& one_case);
// check --soak: `launches` launches over `streams` threads/streams at once (soak.cpp).
int run_soak(int64_t launches, int streams, int device);

void add_bench_options(ArgParser& parser);
int run_bench(const ArgParser& parser);

}  // namespace tcgemm::cli
