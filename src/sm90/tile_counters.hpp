// The counter a counted-tiles launch uses (sm90/tile_counters.cu).
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "common/host/device.hpp"

namespace tcgemm::sm90 {

// The two zeroed words a counted-tiles kernel on `stream` of `device` may
// use (its stream's, or its own when the stream is being captured), or null
// when there is none to give: the kernel then walks the static schedule.
uint32_t* tile_counter(int device, cudaStream_t stream);

}  // namespace tcgemm::sm90
