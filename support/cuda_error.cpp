#include "support/cuda_error.hpp"

namespace tcgemm::support {

namespace {
std::string describe(cudaError_t err, std::string_view what) {
  return std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
}
}  // namespace

CudaError::CudaError(cudaError_t code, std::string_view what) : std::runtime_error(describe(code, what)), code_(code) {}

void throw_cuda_error(cudaError_t err, std::string_view what) { throw CudaError(err, what); }

}  // namespace tcgemm::support
