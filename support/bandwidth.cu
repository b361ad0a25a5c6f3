#include "support/bandwidth.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "support/cuda_error.hpp"

namespace tcgemm::support {
namespace {

// Every 16-byte word read once, XOR-folded into one word per thread that is
// written only when it is a value no fill makes: the compiler cannot drop the
// loads, and the kernel writes (almost) nothing. kStreaming: evict-first
// loads (no reuse to keep: the ceiling); else ordinary loads, whose lines
// stay in L2 (the flush).
template <bool kStreaming>
__global__ void read_kernel(const uint4* data, int64_t words, unsigned* sink) {
  uint32_t acc = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < words; i += stride) {
    const uint4 v = kStreaming ? __ldcs(data + i) : __ldcg(data + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9E3779B9u) sink[0] = acc;
}

constexpr int kReadThreads = 512;

// 8 CTAs of 512 threads per SM: enough loads in flight to saturate HBM.
int read_grid() {
  int device = 0, sms = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
  return sms * 8;
}

}  // namespace

HbmRead::HbmRead(size_t bytes, bool keep_in_l2)
    : buffer_(bytes / sizeof(uint4)), sink_(1), grid_(read_grid()), keep_in_l2_(keep_in_l2) {
  check_cuda(cudaMemset(buffer_.data(), 0x5A, buffer_.bytes()), "fill the read buffer");
}

void HbmRead::launch(cudaStream_t stream) const {
  const auto words = static_cast<int64_t>(buffer_.size());
  if (keep_in_l2_) read_kernel<false><<<grid_, kReadThreads, 0, stream>>>(buffer_.data(), words, sink_.data());
  else read_kernel<true><<<grid_, kReadThreads, 0, stream>>>(buffer_.data(), words, sink_.data());
  check_cuda(cudaGetLastError(), "HBM read kernel launch");
}

double measure_hbm_read_gbps(size_t bytes, int repeats) {
  const HbmRead read(bytes);
  cudaEvent_t start = nullptr, stop = nullptr;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  double best_ms = 0.0;
  cudaError_t err = cudaSuccess;
  for (int r = 0; r <= repeats && err == cudaSuccess; ++r) {  // r = 0: warm-up
    cudaEventRecord(start);
    read.launch(nullptr);
    cudaEventRecord(stop);
    err = cudaEventSynchronize(stop);
    float ms = 0.0f;
    if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, start, stop);
    if (r > 0 && (best_ms == 0.0 || ms < best_ms)) best_ms = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  check_cuda(err, "HBM read kernel");
  return static_cast<double>(read.bytes()) / (best_ms * 1e-3) / 1e9;
}

const char* to_string(L2Flush mode) {
  switch (mode) {
    case L2Flush::none: return "none";
    case L2Flush::write: return "write";
    case L2Flush::read: return "read";
  }
  return "?";
}

L2Flusher::L2Flusher(L2Flush mode, size_t bytes)
    : mode_(mode), scratch_(mode == L2Flush::write ? bytes : 0),
      read_(mode == L2Flush::read ? std::make_unique<HbmRead>(bytes, true) : nullptr) {}

void L2Flusher::flush(cudaStream_t stream) {
  switch (mode_) {
    case L2Flush::none: return;
    case L2Flush::write:
      // A different byte each time, so no layer can treat the write as a no-op.
      check_cuda(cudaMemsetAsync(scratch_.data(), value_++, scratch_.bytes(), stream), "L2 flush");
      return;
    case L2Flush::read: read_->launch(stream); return;
  }
}

}  // namespace tcgemm::support
