// `tcgemm bench --chain`: dependent GEMMs (a decoding MLP) timed as a chain,
// tcgemm with and without programmatic dependent launch against cuBLAS.
#pragma once

#include "bench_settings.hpp"

namespace tcgemm::cli {

// Prints the table; kExitFailure if a call fails or PDL changes a bit.
int run_chain(const BenchSettings& settings);

}  // namespace tcgemm::cli
