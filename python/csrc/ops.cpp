// The torch operators of the `tcgemm` Python package (libtcgemm_torch.so,
// loaded with torch.ops.load_library):
//
//   tcgemm::mm(a, b, alpha=1)                     -> alpha * a @ b, a new tensor
//   tcgemm::mm_out(a, b, out, alpha=1, beta=0, sm_count=0) -> out = alpha * a @ b + beta * out
//   tcgemm::plan(a, b, out=None, alpha=1, beta=0) -> what mm / mm_out would run
//   tcgemm::linear(x, weight, bias=None, activation=0) -> act(x @ weight^T + bias), fused
//   tcgemm::linear_out(x, weight, bias, activation, out, sm_count=0) -> out = act(x @ weight^T + bias), 2-D x
//   tcgemm::bmm(a, b)                             -> a @ b for [batch, M, K] @ [batch, K, N], one batched call
//   tcgemm::grouped_mm(a, b, offs)                -> the M-grouped a @ b[g] (mixture of experts), forward only
//   tcgemm::info()                                -> version and build
//
// sm_count (the in-place operators): the SMs tcgemm's kernel may take, 0 all
// (tcgemm::Options::sm_count), for products that run beside communication.
//
// mm_out and linear_out return nothing (the Python wrappers return `out`): a
// custom op that returned an alias of its input could not be functionalized
// by torch.compile. The fake (meta) implementations are registered in Python
// (tcgemm/_ops.py); the autograd formulas of mm, linear and bmm are here, as
// C++ autograd Functions on the Autograd key: a formula registered from
// Python (torch.library.register_autograd) runs Python on every call, with
// or without gradients, which a decoding step's many small linear layers pay
// for in host time. (C++ autograd Functions do not compose with torch.func's
// transforms: grad and vjp raise, vmap runs per example, and forward mode,
// jvp included, is refused by name; torch.autograd and torch.compile work.)
//
// mm, linear and bmm also have AutocastCUDA kernels: under
// torch.autocast("cuda") their operands are cast to the autocast dtype
// first, as torch's own matmul and linear are (and plan's, where it plans
// an mm).
//
// The CUDA kernels are also registered for CPU: a call with only CPU tensors
// then gets tcgemm's message naming the CPU tensor, not the dispatcher's
// "could not run with arguments from the CPU backend".
#include <string>
#include <vector>

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include "torch_gemm.hpp"

namespace {

using tcgemm::torch_glue::bmm;
using tcgemm::torch_glue::grouped_mm;
using tcgemm::torch_glue::linear;
using tcgemm::torch_glue::linear_out;
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

// The operators through the dispatcher, so that the autograd Functions reach
// the kernels below the Autograd key and their backward passes trace under
// torch.compile (fake tensors dispatch to the fake implementations).
at::Tensor call_mm(const at::Tensor& a, const at::Tensor& b, double alpha) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("tcgemm::mm", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  return op.call(a, b, alpha);
}
at::Tensor call_linear(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       int64_t activation) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("tcgemm::linear", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, int64_t)>();
  return op.call(x, weight, bias, activation);
}
at::Tensor call_bmm(const at::Tensor& a, const at::Tensor& b) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("tcgemm::bmm", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// d(alpha a @ b)/da = alpha grad @ b^T, d/db = alpha a^T @ grad: both on
// tcgemm through transposed views (op T), without copies of a or b.
//
// Each Function keeps only the operands its backward reads, as torch's own
// formulas do: an operand is kept where the other one requires grad. (A
// frozen weight's layer keeps no activations; an input changed in place
// after the forward, or made under inference mode, is no error where its
// gradient is not needed.)
struct MmFunction : torch::autograd::Function<MmFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b, double alpha) {
    ctx->save_for_backward({b.requires_grad() ? a : at::Tensor(), a.requires_grad() ? b : at::Tensor()});
    ctx->saved_data["alpha"] = alpha;
    at::AutoDispatchBelowADInplaceOrView below;
    return call_mm(a, b, alpha);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const double alpha = ctx->saved_data["alpha"].toDouble();
    at::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0)) grad_a = call_mm(grads[0], saved[1].t(), alpha);
    if (ctx->needs_input_grad(1)) grad_b = call_mm(saved[0].t(), grads[0], alpha);
    return {grad_a, grad_b, at::Tensor()};
  }
};

// d act(z)/dz times grad, by torch's own backward formulas
// (tcgemm::Activation: 1 relu, 2 gelu, 3 gelu_tanh, 4 silu).
at::Tensor activation_backward(const at::Tensor& grad, const at::Tensor& z, int64_t activation) {
  switch (activation) {
    case 1: return at::threshold_backward(grad, z, 0.0);
    case 2: return at::gelu_backward(grad, z, "none");
    case 3: return at::gelu_backward(grad, z, "tanh");
    case 4:
      // silu_backward has no derivative of its own: where this backward is
      // itself differentiated (create_graph, grad mode on), the same formula
      // in differentiable operators, as torch's own silu does.
      if (c10::GradMode::is_enabled()) {
        const at::Tensor s = at::sigmoid(z);
        return grad * s * (1 + z * (1 - s));
      }
      return at::silu_backward(grad, z);
    default: return grad;
  }
}

// y = act(z), z = x W^T + b. The pre-activation z is not kept by the fused
// forward: it is recomputed (one more GEMM, on tcgemm, bias fused) when there
// is an activation. Every product runs on tcgemm: dx = dz W, dW = dz^T x
// (transposed views, op T, no copies), db = the sum of dz's rows (in fp32).
struct LinearFunction : torch::autograd::Function<LinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, int64_t activation) {
    // (With an activation, the pre-activation is recomputed from all three.)
    const bool act = activation != 0;
    ctx->save_for_backward({act || weight.requires_grad() ? x : at::Tensor(),
                            act || x.requires_grad() ? weight : at::Tensor(),
                            act && bias.has_value() ? *bias : at::Tensor()});
    ctx->saved_data["activation"] = activation;
    // The sizes backward needs whatever is kept: x's, and weight's [N, K].
    ctx->saved_data["x_sizes"] = c10::IValue(x.sym_sizes());
    ctx->saved_data["n"] = weight.sym_size(0);
    ctx->saved_data["k"] = weight.sym_size(1);
    ctx->saved_data["has_bias"] = bias.has_value();
    ctx->saved_data["bias_dtype"] = bias.has_value() ? bias->scalar_type() : at::kFloat;
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear(x, weight, bias, activation);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& bias = saved[2];
    const int64_t activation = ctx->saved_data["activation"].toInt();
    // Sizes as SymInts: under torch.compile the backward is traced with
    // symbolic sizes, and reading one as an integer would fix a dynamic
    // dimension (rows, sequence length) to the value it was traced with.
    const c10::SymInt n = ctx->saved_data["n"].toSymInt(), k = ctx->saved_data["k"].toSymInt();
    at::Tensor grad_z = grads[0];
    if (activation != 0) {
      const std::optional<at::Tensor> b = bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt;
      grad_z = activation_backward(grad_z, call_linear(x, weight, b, 0), activation);
    }
    // The rows from x's leading dimensions (-1 would be ambiguous where N or K is 0).
    const std::vector<c10::SymInt> x_sizes = ctx->saved_data["x_sizes"].toSymIntVector();
    c10::SymInt m = 1;
    for (size_t d = 0; d + 1 < x_sizes.size(); ++d) m *= x_sizes[d];
    const at::Tensor g2 = grad_z.reshape_symint({m, n});
    at::Tensor grad_x, grad_w, grad_b;
    if (ctx->needs_input_grad(0)) grad_x = call_mm(g2, weight, 1.0).view_symint(x_sizes);
    if (ctx->needs_input_grad(1)) grad_w = call_mm(g2.t(), x.reshape_symint({m, k}), 1.0);
    // (needs_input_grad(2) only where there is a bias: a None input has no edge.)
    if (ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2))
      grad_b = g2.sum({0}, false, at::kFloat).to(ctx->saved_data["bias_dtype"].toScalarType());
    return {grad_x, grad_w, grad_b, at::Tensor()};
  }
};

// dA = dC B^T, dB = A^T dC, batch by batch on tcgemm (transposed views, no
// copies); an operand broadcast over the batch (batch 1) gets the sum over
// the batch, in fp32.
struct BmmFunction : torch::autograd::Function<BmmFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a, const at::Tensor& b) {
    ctx->save_for_backward({b.requires_grad() ? a : at::Tensor(), a.requires_grad() ? b : at::Tensor()});
    // (Each operand's batch, kept or not: a broadcast one's gradient is summed.)
    ctx->saved_data["a_batch"] = a.sym_size(0);
    ctx->saved_data["b_batch"] = b.sym_size(0);
    ctx->saved_data["dtype"] = a.scalar_type();
    at::AutoDispatchBelowADInplaceOrView below;
    return call_bmm(a, b);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& a = saved[0];
    const at::Tensor& b = saved[1];
    const at::ScalarType dtype = ctx->saved_data["dtype"].toScalarType();
    // (Symbolic batch sizes, as in LinearFunction: comparing one with 1
    // guards on "is 1", which a dynamic batch already excludes, not on its
    // value.)
    const auto summed_if_broadcast = [dtype](at::Tensor g, const c10::SymInt& operand_batch) {
      if (operand_batch == 1 && g.sym_size(0) != 1) return g.sum({0}, true, at::kFloat).to(dtype);
      return g;
    };
    at::Tensor grad_a, grad_b;
    if (ctx->needs_input_grad(0))
      grad_a = summed_if_broadcast(call_bmm(grads[0], b.transpose(1, 2)), ctx->saved_data["a_batch"].toSymInt());
    if (ctx->needs_input_grad(1))
      grad_b = summed_if_broadcast(call_bmm(a.transpose(1, 2), grads[0]), ctx->saved_data["b_batch"].toSymInt());
    return {grad_a, grad_b};
  }
};

// Forward-mode AD (torch.autograd.forward_ad, torch.func.jvp and jacfwd):
// the operators have no tangent formula, so a call given an input that
// carries a tangent is refused, rather than returning a result without one
// (which jvp would take for a tangent of zeros).
bool has_tangent(const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); }
bool has_tangent(const std::optional<at::Tensor>& t) { return t.has_value() && has_tangent(*t); }
template <typename... Tensors>
void refuse_forward_ad(const char* op, const Tensors&... inputs) {
  TORCH_CHECK_NOT_IMPLEMENTED(!(has_tangent(inputs) || ...), "tcgemm.", op,
                              ": forward-mode automatic differentiation (torch.autograd.forward_ad, torch.func.jvp, "
                              "jacfwd) is not supported, and an input carries a tangent; use torch's own operator for "
                              "it, or reverse mode (backward, torch.autograd.grad)");
}

// A call records nothing for backward unless grad mode is on and an input
// requires grad (torch::autograd::compute_requires_grad). When it records
// nothing (inference, the common case for a decoding step), the wrappers
// below call the kernel directly, without the autograd Function's node and
// saved state.
at::Tensor mm_autograd(const at::Tensor& a, const at::Tensor& b, double alpha) {
  refuse_forward_ad("matmul", a, b);
  if (!torch::autograd::compute_requires_grad(a, b)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_mm(a, b, alpha);
  }
  return MmFunction::apply(a, b, alpha);
}
at::Tensor linear_autograd(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           int64_t activation) {
  refuse_forward_ad("linear", x, weight, bias);
  if (!torch::autograd::compute_requires_grad(x, weight, bias)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_linear(x, weight, bias, activation);
  }
  return LinearFunction::apply(x, weight, bias, activation);
}
// grouped_mm has no backward: a call that would need one is refused, rather
// than returning a result gradients silently do not flow through.
at::Tensor grouped_mm_autograd(const at::Tensor& a, const at::Tensor& b, const at::Tensor& offs) {
  refuse_forward_ad("grouped_mm", a, b);
  TCGEMM_REFUSE(ValueError, !torch::autograd::compute_requires_grad(a, b),
                "tcgemm.grouped_mm has no backward: call it on tensors that do not require grad (torch.no_grad())");
  at::AutoDispatchBelowADInplaceOrView below;
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("tcgemm::grouped_mm", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b, offs);
}

// The out= operators have no backward, as torch's own out= functions have
// none: a call that would need one (grad mode on, an argument, out included,
// requiring grad) raises RuntimeError, as theirs do, rather than writing a
// result that gradients silently do not flow through.
void mm_out_autograd(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, double alpha, double beta,
                     int64_t sm_count) {
  refuse_forward_ad("mm_out", a, b, out);
  TORCH_CHECK(!torch::autograd::compute_requires_grad(a, b, out),
              "tcgemm.mm_out: out= does not support automatic differentiation, and an argument requires grad; "
              "use tcgemm.matmul without out=, or call it under torch.no_grad() (",
              tcgemm::torch_glue::describe_call(a, b, &out), ")");
  at::AutoDispatchBelowADInplaceOrView below;
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("tcgemm::mm_out", "")
          .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, double, double, int64_t)>();
  op.call(a, b, out, alpha, beta, sm_count);
}
void linear_out_autograd(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         int64_t activation, const at::Tensor& out, int64_t sm_count) {
  refuse_forward_ad("linear_out", x, weight, bias, out);
  TORCH_CHECK(!torch::autograd::compute_requires_grad(x, weight, bias, out),
              "tcgemm.linear_out: out= does not support automatic differentiation, and an argument requires grad; "
              "use tcgemm.linear (no out), or call it under torch.no_grad()",
              tcgemm::torch_glue::describe_linear(x, weight, bias, &out));
  at::AutoDispatchBelowADInplaceOrView below;
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("tcgemm::linear_out", "")
                             .typed<void(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                         int64_t, const at::Tensor&, int64_t)>();
  op.call(x, weight, bias, activation, out, sm_count);
}

at::Tensor bmm_autograd(const at::Tensor& a, const at::Tensor& b) {
  refuse_forward_ad("bmm", a, b);
  if (!torch::autograd::compute_requires_grad(a, b)) {
    at::AutoDispatchBelowADInplaceOrView below;
    return call_bmm(a, b);
  }
  return BmmFunction::apply(a, b);
}

// Under torch.autocast("cuda"), floating-point operands (bias included) are
// cast to the autocast dtype, as torch casts those of its own matmul and
// linear (autocast's lower-precision list), with autocast's cache of the
// casts of leaf parameters; the op then runs below the Autocast key.
at::Tensor autocast(const at::Tensor& t) {
  return at::autocast::cached_cast(at::autocast::get_autocast_dtype(at::kCUDA), t, c10::DeviceType::CUDA);
}
at::Tensor mm_autocast(const at::Tensor& a, const at::Tensor& b, double alpha) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return call_mm(autocast(a), autocast(b), alpha);
}
at::Tensor linear_autocast(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                           int64_t activation) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return call_linear(autocast(x), autocast(weight), bias.has_value() ? std::optional(autocast(*bias)) : std::nullopt,
                     activation);
}
at::Tensor bmm_autocast(const at::Tensor& a, const at::Tensor& b) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  return call_bmm(autocast(a), autocast(b));
}
// The plan of the call matmul would make: without out, mm's (its operands
// cast); with out, mm_out's, which autocast leaves as it is (torch's out=
// functions are not autocast either).
std::vector<std::string> plan_autocast(const at::Tensor& a, const at::Tensor& b, const std::optional<at::Tensor>& out,
                                       double alpha, double beta) {
  c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::DispatchKey::AutocastCUDA);
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("tcgemm::plan", "")
                             .typed<std::vector<std::string>(const at::Tensor&, const at::Tensor&,
                                                             const std::optional<at::Tensor>&, double, double)>();
  if (out.has_value()) return op.call(a, b, out, alpha, beta);
  return op.call(autocast(a), autocast(b), out, alpha, beta);
}

}  // namespace

TORCH_LIBRARY(tcgemm, m) {
  // The operators with fake implementations and autograd (_ops.py) are
  // pt2_compliant: torch.compile and torch.export take them where only such
  // operators are allowed (torch.library.opcheck, test_torch_cpu.py). plan
  // and info answer the host and are not traced.
  const std::vector<at::Tag> traced{at::Tag::pt2_compliant_tag};
  m.def("mm(Tensor a, Tensor b, float alpha=1.0) -> Tensor", traced);
  m.def("mm_out(Tensor a, Tensor b, Tensor(a!) out, float alpha=1.0, float beta=0.0, int sm_count=0) -> ()", traced);
  m.def("plan(Tensor a, Tensor b, Tensor? out=None, float alpha=1.0, float beta=0.0) -> str[]");
  m.def("linear(Tensor x, Tensor weight, Tensor? bias=None, int activation=0) -> Tensor", traced);
  m.def("linear_out(Tensor x, Tensor weight, Tensor? bias, int activation, Tensor(a!) out, int sm_count=0) -> ()",
        traced);
  m.def("bmm(Tensor a, Tensor b) -> Tensor", traced);
  m.def("grouped_mm(Tensor a, Tensor b, Tensor offs) -> Tensor", traced);
  m.def("info() -> str[]", &info);
}

namespace {
// The kernels of the CUDA key, registered for CPU too (see the top).
void register_kernels(torch::Library& m) {
  m.impl("bmm", &bmm);
  m.impl("grouped_mm", &grouped_mm);
  m.impl("linear", &linear);
  m.impl("linear_out", &linear_out);
  m.impl("mm", &mm);
  m.impl("mm_out", &mm_out);
  m.impl("plan", &plan);
}
}  // namespace

TORCH_LIBRARY_IMPL(tcgemm, CUDA, m) { register_kernels(m); }
TORCH_LIBRARY_IMPL(tcgemm, CPU, m) { register_kernels(m); }

TORCH_LIBRARY_IMPL(tcgemm, Autograd, m) {
  m.impl("bmm", &bmm_autograd);
  m.impl("grouped_mm", &grouped_mm_autograd);
  m.impl("linear", &linear_autograd);
  m.impl("linear_out", &linear_out_autograd);
  m.impl("mm", &mm_autograd);
  m.impl("mm_out", &mm_out_autograd);
}

TORCH_LIBRARY_IMPL(tcgemm, AutocastCUDA, m) {
  m.impl("bmm", &bmm_autocast);
  m.impl("linear", &linear_autocast);
  m.impl("mm", &mm_autocast);
  m.impl("plan", &plan_autocast);
}
