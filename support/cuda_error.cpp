#include "support/cuda_error.hpp"

namespace tcgemm::support {

namespace {
// Appended piece by piece: GCC 12's -Wrestrict misfires on a chain of
// operator+ over string temporaries at -O3.
std::string describe(cudaError_t err, std::string_view what) {
  std::string s(what);
  s.append(": ").append(cudaGetErrorName(err)).append(" (").append(cudaGetErrorString(err)).append(")");
  return s;
}
}  // namespace

CudaError::CudaError(cudaError_t code, std::string_view what) : std::runtime_error(describe(code, what)), code_(code) {}

void throw_cuda_error(cudaError_t err, std::string_view what) { throw CudaError(err, what); }

}  // namespace tcgemm::support
