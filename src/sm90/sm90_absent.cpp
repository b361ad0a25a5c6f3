// Stand-ins when the library is built without sm_90a: dispatch never selects
// the sm90 backend then (kHasSm90 is false), and the peak measurement says why.
#include "sm90/sm90_gemm.hpp"
#include "tcgemm/diagnostics.hpp"

namespace tcgemm::sm90 {
std::string run_f16(const GemmArgs&, const Config&, int*) { return "built without sm_90a"; }
std::string run_bf16(const GemmArgs&, const Config&, int*) { return "built without sm_90a"; }
}  // namespace tcgemm::sm90

namespace tcgemm {
inline namespace TCGEMM_ABI_NAMESPACE {
double measure_peak_tflops(DType, double, std::string* why) noexcept {
  if (why != nullptr) *why = "built without sm_90a";
  return -1.0;
}
}  // inline namespace TCGEMM_ABI_NAMESPACE
}  // namespace tcgemm
