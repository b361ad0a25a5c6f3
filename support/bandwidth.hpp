// The HBM read ceiling: what a plain streaming read reaches on this GPU now,
// measured beside the GEMMs so that a memory-bound GEMM's achieved bandwidth
// has a ceiling of the same clocks and heat (as the tensor-core ceiling does
// for the compute-bound ones).
#pragma once

#include <cstddef>

namespace tcgemm::support {

// GB/s (1e9 bytes/s) of the fastest of `repeats` reads of a `bytes` buffer
// (far larger than L2) by a grid-stride kernel of 16-byte loads, on the
// current device. Throws CudaError when CUDA fails.
double measure_hbm_read_gbps(size_t bytes = size_t{1} << 30, int repeats = 10);

}  // namespace tcgemm::support
