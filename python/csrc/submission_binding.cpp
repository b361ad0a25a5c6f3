// The binding of the one-file submission (python -m tcgemm.make_submission):
// compiled by load_inline as its C++ source, next to the library amalgamated
// into one CUDA source. Plain pybind11 functions rather than torch operators,
// so that the file and the installed package can be loaded into one process
// (an operator namespace can be defined only once). Same checks and mapping
// as the package's operators: torch_gemm.hpp.
#include <torch/extension.h>

#include "torch_gemm.hpp"

namespace {

std::vector<std::string> plan(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  return tcgemm::torch_glue::plan_call(a, b, &out, 1.0, 0.0);
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  namespace py = pybind11;
  m.def("mm_out", torch::wrap_pybind_function(tcgemm::torch_glue::mm_out), "out = alpha * a @ b + beta * out",
        py::arg("a"), py::arg("b"), py::arg("out"), py::arg("alpha") = 1.0, py::arg("beta") = 0.0,
        py::arg("sm_count") = 0);
  m.def("plan", torch::wrap_pybind_function(plan),
        "the plan of mm_out(a, b, out): name, value, name, value, ... (tcgemm.Plan's fields)", py::arg("a"),
        py::arg("b"), py::arg("out"));
}
