// Stand-ins when the library is built without sm_100a: dispatch never selects
// the sm100 backend then (kHasSm100 is false).
#include "sm100/sm100_gemm.hpp"

namespace tcgemm::sm100 {
std::string run_f16(const GemmArgs&, const Config&, int*) { return "built without sm_100a"; }
std::string run_bf16(const GemmArgs&, const Config&, int*) { return "built without sm_100a"; }
}  // namespace tcgemm::sm100
