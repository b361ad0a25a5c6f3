// The torch operators of the `tcgemm` Python package (libtcgemm_torch.so,
// loaded with torch.ops.load_library):
//
//   tcgemm::mm(a, b, alpha=1)                     -> alpha * a @ b, a new tensor
//   tcgemm::mm_out(a, b, out, alpha=1, beta=0)    -> out = alpha * a @ b + beta * out
//   tcgemm::plan(a, b, out=None, alpha=1, beta=0) -> what mm / mm_out would run
//   tcgemm::linear(x, weight, bias=None, activation=0) -> act(x @ weight^T + bias), fused
//   tcgemm::bmm(a, b)                             -> a @ b for [batch, M, K] @ [batch, K, N], one batched call
//   tcgemm::info()                                -> version and build
//
// mm_out returns nothing (the Python wrapper returns `out`): a custom op that
// returned an alias of its input could not be functionalized by
// torch.compile. The fake (meta) implementations and autograd formulas are
// registered in Python (tcgemm/_ops.py).
//
// The CUDA kernels are also registered for CPU: a call with only CPU tensors
// then gets tcgemm's message naming the CPU tensor, not the dispatcher's
// "could not run with arguments from the CPU backend".
#include <string>
#include <vector>

#include <torch/library.h>

#include "torch_gemm.hpp"

namespace {

using tcgemm::torch_glue::bmm;
using tcgemm::torch_glue::linear;
using tcgemm::torch_glue::mm;
using tcgemm::torch_glue::mm_out;

std::vector<std::string> plan(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& out,
                              double alpha, double beta) {
  return tcgemm::torch_glue::plan_call(a, b, out.has_value() ? &*out : nullptr, alpha, beta);
}

std::vector<std::string> info() {
  const tcgemm::BuildInfo i = tcgemm::build_info();
  return {i.version, i.cuda_archs, i.kernel_families, std::to_string(i.cuda_runtime_version)};
}

}  // namespace

TORCH_LIBRARY(tcgemm, m) {
  m.def("mm(Tensor a, Tensor b, float alpha=1.0) -> Tensor");
  m.def("mm_out(Tensor a, Tensor b, Tensor(a!) out, float alpha=1.0, float beta=0.0) -> ()");
  m.def("plan(Tensor a, Tensor b, Tensor? out=None, float alpha=1.0, float beta=0.0) -> str[]");
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None, int activation=0) -> Tensor");
  m.def("bmm(Tensor a, Tensor b) -> Tensor");
  m.def("info() -> str[]", &info);
}

TORCH_LIBRARY_IMPL(tcgemm, CUDA, m) {
  m.impl("bmm", &bmm);
  m.impl("linear", &linear);
  m.impl("mm", &mm);
  m.impl("mm_out", &mm_out);
  m.impl("plan", &plan);
}

TORCH_LIBRARY_IMPL(tcgemm, CPU, m) {
  m.impl("bmm", &bmm);
  m.impl("linear", &linear);
  m.impl("mm", &mm);
  m.impl("mm_out", &mm_out);
  m.impl("plan", &plan);
}
