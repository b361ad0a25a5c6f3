// The memory system as the bench sees it: the HBM read ceiling (what a plain
// streaming read reaches on this GPU now, measured beside the GEMMs so that a
// memory-bound GEMM's achieved bandwidth has a ceiling of the same clocks and
// heat, as the tensor-core ceiling does for the compute-bound ones), and the
// L2 flush between timed calls.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "support/device_buffer.hpp"

namespace tcgemm::support {

// A plain read of a buffer of its own (contents defined, written once): a
// grid-stride kernel of 16-byte loads, 8 CTAs of 512 threads per SM, that
// writes (almost) nothing. Streaming (evict-first) loads by default: the HBM
// ceiling times it on 1 GiB, and the bench beside a memory-bound GEMM on the
// GEMM's own byte count, where launch, ramp and tail cost what they cost the
// GEMM. With keep_in_l2, ordinary loads whose lines stay in L2 (the read
// flush).
class HbmRead {
 public:
  explicit HbmRead(size_t bytes, bool keep_in_l2 = false);
  void launch(cudaStream_t stream) const;
  size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer<uint4> buffer_;
  DeviceBuffer<unsigned> sink_;
  int grid_ = 0;
  bool keep_in_l2_;
};

// GB/s (1e9 bytes/s) of the fastest of `repeats` reads of a `bytes` buffer
// (far larger than L2) by HbmRead, on the current device. Throws CudaError
// when CUDA fails.
double measure_hbm_read_gbps(size_t bytes = size_t{1} << 30, int repeats = 10);

// How L2 is emptied of a timed call's operands before the call.
//   write: a memset of the scratch buffer (the leaderboard's way, and
//          torch's and Triton's do_bench): L2 is left full of dirty lines,
//          which the timed call writes back to HBM as its reads evict them.
//          A memory-bound call pays for up to L2's size of writes that are
//          not its own.
//   read:  ordinary loads of the whole scratch buffer: L2 is left holding
//          clean lines, as a model's layer finds it after the previous layer
//          read its own weights; the timed call's traffic is its own.
//   none:  no flush: operands may be served from L2 (a warm repeat).
enum class L2Flush { none, write, read };
const char* to_string(L2Flush mode);

// Evicts the operands from L2 between timed launches through a scratch
// buffer several times larger than L2 (the leaderboard writes 256 MB too).
class L2Flusher {
 public:
  explicit L2Flusher(L2Flush mode = L2Flush::write, size_t bytes = size_t{256} << 20);
  void flush(cudaStream_t stream);
  size_t bytes() const { return read_ ? read_->bytes() : scratch_.bytes(); }

 private:
  L2Flush mode_;
  DeviceBuffer<unsigned char> scratch_;  // written (write)
  std::unique_ptr<HbmRead> read_;        // read (read)
  unsigned char value_ = 0;
};

}  // namespace tcgemm::support
