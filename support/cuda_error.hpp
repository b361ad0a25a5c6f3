// How the support code reports a CUDA failure: an exception that names what
// was being done and the CUDA error. The GPU tests let it fail the test that
// called the helper; the command line tool catches it in main and exits 1.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace tcgemm::support {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, std::string_view what);
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError("<what>: <error name> (<description>)").
[[noreturn]] void throw_cuda_error(cudaError_t err, std::string_view what);

// Inline so the success path costs a comparison: the tool checks calls
// inside its timed loops.
inline void check_cuda(cudaError_t err, std::string_view what) {
  if (err != cudaSuccess) throw_cuda_error(err, what);
}

}  // namespace tcgemm::support
