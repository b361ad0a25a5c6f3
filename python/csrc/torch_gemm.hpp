// torch tensors -> tcgemm::gemm: the checks the library cannot make (ranks,
// dtypes, shapes, devices), the stride -> op/ld mapping, the current stream,
// and failures turned into Python exceptions. Shared by the torch op library
// (ops.cpp) and the one-file submission (submission_binding.cpp), so both
// take and refuse exactly the same calls.
//
// Exceptions: c10::TypeError -> TypeError (dtypes), c10::ValueError ->
// ValueError (shapes, layouts, devices, and calls the library rejects as
// invalid), c10::Error -> RuntimeError (CUDA failures). Every check runs
// before anything is launched, and the library writes nothing to C when it
// rejects a call, so a refused call leaves `out` untouched.
#pragma once

#include <string>
#include <vector>

#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_strided.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <c10/util/accumulate.h>

#include "tcgemm/tcgemm.hpp"
#include "torch_layout.hpp"

namespace tcgemm::torch_glue {

// A checked call: the library's arguments and the tensors they point into
// (operands that had to be copied are the copies, kept alive until launch).
struct Call {
  GemmArgs args;
  at::Tensor a, b, out;
  bool a_copied = false, b_copied = false;
};

inline const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    default: return c10::toString(t);
  }
}

// Messages are assembled with std::string, not c10::str / TORCH_CHECK's
// formatting: those instantiate iostreams inside this library, and in the
// PyTorch process an ostringstream built here crashed (seen on the H200 with
// torch 2.11: every refused call segfaulted while formatting its message).
// Throwing goes through C10_THROW_ERROR, whose constructors live in libc10.
#define TCGEMM_REFUSE(kind, cond, message)              \
  do {                                                   \
    if (!(cond)) C10_THROW_ERROR(kind, (message));       \
  } while (0)

inline std::string dims(c10::IntArrayRef v) {
  std::string s("[");
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s.append(", ");
    s.append(std::to_string(v[i]));
  }
  s.append("]");
  return s;
}

// "[128, 64] float16 cuda:0 strides [64, 1]": a tensor as the messages show it.
inline std::string describe(const at::Tensor& t) {
  std::string s = dims(t.sizes());
  s.append(" ").append(dtype_name(t.scalar_type())).append(" ").append(t.device().str());
  s.append(" strides ").append(dims(t.strides()));
  return s;
}

// The whole call, appended to every message (as the library does with m, n, k).
inline std::string describe_call(const at::Tensor& a, const at::Tensor& b, const at::Tensor* out) {
  std::string s = "a: " + describe(a) + ", b: " + describe(b);
  if (out != nullptr) s += ", out: " + describe(*out);
  return s;
}

// Whether two views of one memory may share an element, for the views torch
// cannot tell apart: they may where the bytes they span, first element to
// last, meet, unless both are row-major with one row pitch and their columns
// fall in disjoint ranges of it (two column blocks of one buffer).
inline bool may_overlap(const at::Tensor& x, const at::Tensor& y) {
  if (x.numel() == 0 || y.numel() == 0) return false;
  const auto span = [](const at::Tensor& t) {
    const auto begin = reinterpret_cast<uintptr_t>(t.data_ptr());
    uintptr_t last = begin;
    for (int64_t d = 0; d < t.dim(); ++d)
      last += static_cast<uintptr_t>((t.size(d) - 1) * t.stride(d) * t.element_size());
    return std::pair<uintptr_t, uintptr_t>{begin, last + t.element_size()};
  };
  const auto [xb, xe] = span(x);
  const auto [yb, ye] = span(y);
  if (xe <= yb || ye <= xb) return false;
  if (x.dim() == 2 && y.dim() == 2 && x.stride(1) == 1 && y.stride(1) == 1 && x.stride(0) == y.stride(0) &&
      x.stride(0) > 0 && x.element_size() == y.element_size()) {
    // Every element's offset within its row pitch: x's in [0, wx), y's in [d, d + wy), on a circle of the pitch.
    const auto pitch = static_cast<uintptr_t>(x.stride(0) * x.element_size());
    const auto wx = static_cast<uintptr_t>(x.size(1) * x.element_size());
    const auto wy = static_cast<uintptr_t>(y.size(1) * y.element_size());
    const uintptr_t d = ((yb % pitch) + pitch - (xb % pitch)) % pitch;
    if (wx <= pitch && wy <= pitch && d >= wx && d + wy <= pitch) return false;
  }
  return true;
}

// The names of a product's operands in messages, as the caller calls them
// (linear: x and the weight, passed transposed as b).
struct OperandNames {
  const char* a = "a";
  const char* b = "b";
  const char* product = "a @ b";
  const char* returning = "tcgemm.matmul(a, b)";  // the call that returns a new result instead of out
};

// Everything about the tensors that GemmArgs cannot express. `out` may be null
// (the op allocates it). `call` describes the caller's whole call for the end
// of a message (the operator's tensors, where a and b are views of them: x
// as M x K, the weight transposed, a batch's first matrices), `names` its
// operands.
template <class Describe>
void check_tensors(const at::Tensor& a, const at::Tensor& b, const at::Tensor* out, const Describe& call,
                   OperandNames names) {
  const std::string a_b = std::string(names.a) + " and " + names.b;
  TCGEMM_REFUSE(ValueError, a.dim() == 2 && b.dim() == 2, "tcgemm: " + a_b + " must be 2-D matrices" + call());
  TCGEMM_REFUSE(TypeError, a.scalar_type() == at::kHalf || a.scalar_type() == at::kBFloat16,
                std::string("tcgemm: dtype ") + dtype_name(a.scalar_type()) + " is not supported: " + names.a +
                    ", " + names.b + " and out must be all float16 or all bfloat16" + call());
  TCGEMM_REFUSE(TypeError, b.scalar_type() == a.scalar_type(),
                "tcgemm: " + a_b + " must have the same dtype, got " + dtype_name(a.scalar_type()) + " and " +
                    dtype_name(b.scalar_type()) + call());
  TCGEMM_REFUSE(ValueError, a.size(1) == b.size(0),
                std::string("tcgemm: shapes do not match for ") + names.product + ": " + names.a + " is " +
                    dims(a.sizes()) + ", " + names.b + " is " + dims(b.sizes()) + call());
  if (out != nullptr) {
    TCGEMM_REFUSE(ValueError, out->dim() == 2, "tcgemm: out must be a 2-D matrix" + call());
    TCGEMM_REFUSE(TypeError, out->scalar_type() == a.scalar_type(),
                  "tcgemm: out must have the dtype of " + a_b + " (" + dtype_name(a.scalar_type()) + "), got " +
                      dtype_name(out->scalar_type()) + call());
    TCGEMM_REFUSE(ValueError, out->size(0) == a.size(0) && out->size(1) == b.size(1),
                  "tcgemm: out must be [" + std::to_string(a.size(0)) + ", " + std::to_string(b.size(1)) + "] for " +
                      names.product + ", got " + dims(out->sizes()) + call());
    TCGEMM_REFUSE(ValueError, output_ld(out->size(0), out->size(1), out->stride(0), out->stride(1)) > 0,
                  std::string("tcgemm: out must be row-major (out.stride(1) == 1, out.stride(0) >= out.size(1)); "
                              "pass out.contiguous() and copy back, or use the result of ") +
                      names.returning + call());
  }
  // CPU tensors are refused here rather than handed to the library, whose
  // verdict ("A is host memory") needs a GPU to reach and is silent for
  // empty shapes.
  const at::Tensor* tensors[] = {&a, &b, out};
  const char* tensor_names[] = {names.a, names.b, "out"};
  for (int i = 0; i < 3; ++i) {
    if (tensors[i] == nullptr) continue;
    TCGEMM_REFUSE(ValueError, tensors[i]->is_cuda(),
                  std::string("tcgemm: ") + tensor_names[i] + " is on " + tensors[i]->device().str() +
                      "; tcgemm computes on CUDA tensors only" + call());
    TCGEMM_REFUSE(ValueError, tensors[i]->device() == a.device(),
                  std::string("tcgemm: ") + names.a + ", " + names.b + " and out must be on one CUDA device, got " +
                      tensor_names[i] + " on " + tensors[i]->device().str() + " and " + names.a + " on " +
                      a.device().str() + call());
  }
  if (out != nullptr) {
    for (int i = 0; i < 2; ++i) {
      // Views torch cannot tell apart (TooHard: not dense, one storage) are
      // refused where their byte spans meet, unless the operand is copied
      // before the call (make_call: strides no op/ld describes), so that the
      // kernel never reads the memory it writes.
      const at::Tensor& t = *tensors[i];
      const at::MemOverlapStatus overlap = at::get_overlap_status(*out, t);
      const auto copied = [&] { return operand_layout(t.size(0), t.size(1), t.stride(0), t.stride(1)).copy; };
      const bool overlapping = overlap == at::MemOverlapStatus::Full || overlap == at::MemOverlapStatus::Partial ||
                               (overlap == at::MemOverlapStatus::TooHard && !copied() && may_overlap(*out, t));
      TCGEMM_REFUSE(ValueError, !overlapping,
                    std::string("tcgemm: out overlaps ") + tensor_names[i] +
                        " in memory; results would depend on the order of writes" + call());
    }
  }
}
// The same for a call of a and b themselves (mm, mm_out, plan).
inline void check_tensors(const at::Tensor& a, const at::Tensor& b, const at::Tensor* out) {
  // Messages are only built when a check fails.
  check_tensors(a, b, out, [&] { return " (" + describe_call(a, b, out) + ")"; }, OperandNames{});
}

// Checked tensors -> GemmArgs. Operands whose strides tcgemm cannot describe
// are copied (documented: an extra read and write of that operand).
inline Call make_call(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, double alpha, double beta) {
  Call c;
  c.a = a;
  c.b = b;
  c.out = out;
  OperandLayout la = operand_layout(a.size(0), a.size(1), a.stride(0), a.stride(1));
  OperandLayout lb = operand_layout(b.size(0), b.size(1), b.stride(0), b.stride(1));
  if (la.copy) {
    c.a = a.contiguous();
    c.a_copied = true;
    la = operand_layout(c.a.size(0), c.a.size(1), c.a.stride(0), c.a.stride(1));
  }
  if (lb.copy) {
    c.b = b.contiguous();
    c.b_copied = true;
    lb = operand_layout(c.b.size(0), c.b.size(1), c.b.stride(0), c.b.stride(1));
  }
  GemmArgs& g = c.args;
  g.dtype = a.scalar_type() == at::kHalf ? DType::f16 : DType::bf16;
  g.op_a = la.op;
  g.op_b = lb.op;
  g.m = a.size(0);
  g.n = b.size(1);
  g.k = a.size(1);
  g.alpha = static_cast<float>(alpha);
  g.beta = static_cast<float>(beta);
  g.a = c.a.data_ptr();
  g.lda = la.ld;
  g.b = c.b.data_ptr();
  g.ldb = lb.ld;
  g.c = out.data_ptr();
  g.ldc = output_ld(out.size(0), out.size(1), out.stride(0), out.stride(1));
  return c;
}

// A rejected or failed call as the matching Python exception, with the
// library's reason: ValueError for arguments it refuses or no kernel (nor
// cuBLAS) can take, RuntimeError for a CUDA failure.
[[noreturn]] inline void throw_error(const Plan& p) {
  if (p.status == Status::invalid_argument) C10_THROW_ERROR(ValueError, p.reason);
  if (p.status == Status::unsupported) C10_THROW_ERROR(ValueError, p.reason + " [status unsupported]");
  C10_THROW_ERROR(Error, p.reason + " [status " + to_string(p.status) + "]");
}

// Runs the call on the current stream of the tensors' device.
inline void run(const Call& c, const Options& options = {}) {
  const c10::cuda::CUDAGuard guard(c.out.device());
  GemmArgs g = c.args;
  g.stream = c10::cuda::getCurrentCUDAStream(c.out.device().index()).stream();
  const Plan p = gemm(g, options);
  if (p.status != Status::ok) throw_error(p);
}

// What the call would run, without running it: the fields of tcgemm.Plan
// (python/tcgemm/__init__.py) as name, value pairs, which Python takes by
// name. status, backend, kernel and reason are the library's Plan; layout
// the ops and leading dimensions handed to the library ("NT lda=.. ldb=..
// ldc=..", with "copied a" / "copied b" where an operand was copied); path
// and the kernel's configuration (Plan::path, Plan::config) follow, numbers
// in decimal, pingpong and swap_ab as "true" or "false".
inline std::vector<std::string> plan_of(const Call& c) {
  const c10::cuda::CUDAGuard guard(c.out.device());
  const Plan p = plan(c.args);
  std::string layout = std::string(to_string(c.args.op_a)) + to_string(c.args.op_b) + " lda=" +
                       std::to_string(c.args.lda) + " ldb=" + std::to_string(c.args.ldb) +
                       " ldc=" + std::to_string(c.args.ldc);
  if (c.a_copied) layout += " copied a";
  if (c.b_copied) layout += " copied b";
  const KernelConfig& k = p.config;
  return {"status",    to_string(p.status),       "backend",  to_string(p.backend),
          "kernel",    p.kernel,                  "reason",   p.reason,
          "layout",    layout,                    "path",     to_string(p.path),
          "block_m",   std::to_string(k.block_m), "block_n",  std::to_string(k.block_n),
          "block_k",   std::to_string(k.block_k), "stages",   std::to_string(k.stages),
          "cluster_m", std::to_string(k.cluster_m), "pingpong", k.pingpong ? "true" : "false",
          "schedule",  to_string(k.schedule),       "cluster_n", std::to_string(k.cluster_n),
          "swap_ab",   k.swap_ab ? "true" : "false"};
}

// Options::sm_count: the SMs a call of tcgemm's kernels may take (0: all).
inline Options sm_bound(int64_t sm_count) {
  TCGEMM_REFUSE(ValueError, sm_count >= 0 && sm_count <= INT32_MAX,
                "tcgemm: sm_count must be 0 (every SM) or a number of SMs, not " + std::to_string(sm_count));
  Options o;
  o.sm_count = static_cast<int>(sm_count);
  return o;
}

// A call that writes a caller's tensor bumps its version counter once the
// library has taken the call, as torch's in-place operators do after they
// write: autograd then refuses a backward that needs the values it
// overwrote. A refused call changes nothing, its version included. (No
// ADInplaceOrView kernel would bump it: the autograd fallback of an operator
// without a derivative dispatches below that key.) An inference tensor,
// whose version cannot change outside inference_mode, is refused there by
// writable() before anything runs, with torch's own words.
inline void writable(const at::Tensor& out) {
  // (The condition of the version counter's own bump: an inference tensor has none.)
  TORCH_CHECK(out.unsafeGetTensorImpl()->version_counter().enabled() || c10::InferenceMode::is_enabled(),
              "Inplace update to inference tensor outside InferenceMode is not allowed (tcgemm writes out in "
              "place); make a clone of it to get a normal tensor first");
}
inline void mark_written(const at::Tensor& out) { out.unsafeGetTensorImpl()->bump_version(); }

// out = alpha * a @ b + beta * out, on at most sm_count SMs (0: all).
inline void mm_out(const at::Tensor& a, const at::Tensor& b, const at::Tensor& out, double alpha, double beta,
                   int64_t sm_count = 0) {
  const Options options = sm_bound(sm_count);
  check_tensors(a, b, &out);
  const Call c = make_call(a, b, out, alpha, beta);
  writable(out);
  run(c, options);
  mark_written(out);
}

// Whether a new result of m rows of n columns is computed into rows padded
// to 8 columns and returned as a contiguous copy. The kernels store rows of C
// 16 bytes apart; a result of n columns, n not a multiple of 8, stored in
// place would go to cuBLAS from two rows on, while one row (whose leading
// dimension is never used) runs on the kernels: the same row of a product
// would then have other bits in a call of more rows (cuBLAS sums K in
// another order), breaking batch invariance between a decoding step and the
// prefill of the same layer. Not where K is not a multiple of 8: a weight
// of such rows (nn.Linear's, read transposed) goes to cuBLAS at every M, so
// the copy would buy nothing (`fused` calls have their operands copied
// K-padded, so they pad here too). (What this leaves: a plain product whose
// B is stored K x N, K not a multiple of 8, runs one row on the kernels and
// more, whose rows of A are then not 16 bytes apart, on cuBLAS.)
inline bool pads_result_rows(int64_t m, int64_t n, int64_t k, bool fused = false) {
  return m > 1 && n % 8 != 0 && (fused || k % 8 == 0);
}

// A new row-major [m, n] tensor to compute into: a view of [m, round_up_8(n)]
// rows where pads_result_rows; returned by contiguous_result as a contiguous
// tensor either way.
inline at::Tensor new_result(int64_t m, int64_t n, bool padded, const at::TensorOptions& options) {
  if (!padded) return at::empty({m, n}, options);
  return at::empty({m, round_up_8(n)}, options).narrow(1, 0, n);
}
inline at::Tensor contiguous_result(const at::Tensor& out, bool padded) { return padded ? out.contiguous() : out; }

// alpha * a @ b into a new row-major tensor.
inline at::Tensor mm(const at::Tensor& a, const at::Tensor& b, double alpha) {
  check_tensors(a, b, nullptr);
  const bool padded = pads_result_rows(a.size(0), b.size(1), a.size(1));
  const at::Tensor out = new_result(a.size(0), b.size(1), padded, a.options());
  run(make_call(a, b, out, alpha, 0.0));
  return contiguous_result(out, padded);
}

// The strides of bmm's [batch, M, N] result: contiguous, except for one row
// of N not a multiple of 8, whose problems then start 8-element aligned (N
// rounded up; the result is a view of that storage): TMA, and so tcgemm's
// kernels, need a batch stride of whole 16-byte units, and a decoding step's
// scores (q of one row against keys of any length) would otherwise all go
// to cuBLAS. (The fake implementation gives the same strides.) More rows of
// such an N are computed padded and returned contiguous (pads_result_rows).
inline std::vector<int64_t> bmm_output_strides(int64_t m, int64_t n) {
  if (m == 1 && n % 8 != 0) return {round_up_8(n), round_up_8(n), 1};
  return {m * n, n, 1};
}

// a @ b for batches of matrices: a [batch, M, K], b [batch, K, N] (a batch
// dimension of 1 is broadcast: one matrix for every problem, batch stride 0),
// into a new [batch, M, N] tensor, by one strided batched tcgemm call. Each
// operand's matrices are read in place when one op/ld describes them all
// (operand_layout on dimensions 1 and 2) and its batch stride is stride(0);
// otherwise the operand is copied to a contiguous tensor first.
inline at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  auto call = [&] { return " (" + describe_call(a, b, nullptr) + ")"; };
  TCGEMM_REFUSE(ValueError, a.dim() == 3 && b.dim() == 3,
                "tcgemm.bmm: a and b must be 3-D [batch, rows, cols]" + call());
  // (A batch of 0 against one of 1 broadcasts to 0, as torch.matmul's.)
  const int64_t batch = a.size(0) == 0 || b.size(0) == 0 ? 0 : std::max(a.size(0), b.size(0));
  TCGEMM_REFUSE(ValueError, (a.size(0) == batch || a.size(0) == 1) && (b.size(0) == batch || b.size(0) == 1),
                "tcgemm.bmm: the batch sizes " + std::to_string(a.size(0)) + " and " + std::to_string(b.size(0)) +
                    " must be equal, or one of them 1" + call());
  const int64_t m = a.size(1), k = a.size(2), n = b.size(2);
  // The checks of one product (dtypes, shapes, devices), on the first
  // matrices (an empty batch: on one-element stand-ins of their shapes).
  constexpr OperandNames kBmmNames{"a", "b", "a @ b", "tcgemm.bmm(a, b)"};
  if (batch > 0)
    check_tensors(a.select(0, 0), b.select(0, 0), nullptr, call, kBmmNames);
  else
    check_tensors(a.new_empty_strided({m, k}, {0, 0}), b.new_empty_strided({b.size(1), n}, {0, 0}), nullptr, call,
                  kBmmNames);
  if (batch == 0) return at::empty({batch, m, n}, a.options());
  const bool padded = pads_result_rows(m, n, k);
  const at::Tensor out = padded ? new_result(batch * m, n, true, a.options()).view({batch, m, n})
                                : at::empty_strided({batch, m, n}, bmm_output_strides(m, n), a.options());
  auto in_place = [](const at::Tensor& x) {
    return !operand_layout(x.size(1), x.size(2), x.stride(1), x.stride(2)).copy;
  };
  // An operand that needs a copy is copied once per distinct matrix: an
  // expanded one (batch stride 0) as its one matrix, broadcast.
  auto prepared = [&](const at::Tensor& x) {
    if (in_place(x)) return x;
    if (x.size(0) > 1 && x.stride(0) == 0) return x.select(0, 0).contiguous().unsqueeze(0);
    return x.contiguous();
  };
  const at::Tensor a3 = prepared(a);
  const at::Tensor b3 = prepared(b);
  Call c = make_call(a3.select(0, 0), b3.select(0, 0), out.select(0, 0), 1.0, 0.0);
  c.a = a3;  // (the whole batches stay alive until the launch)
  c.b = b3;
  c.out = out;
  c.a_copied = !in_place(a);
  c.b_copied = !in_place(b);
  c.args.batch = batch;
  c.args.stride_a = a3.size(0) == 1 ? 0 : a3.stride(0);
  c.args.stride_b = b3.size(0) == 1 ? 0 : b3.stride(0);
  c.args.stride_c = out.stride(0);
  run(c);
  return contiguous_result(out, padded);
}

// The M-grouped product (a mixture of experts): a [M, K] holds every
// group's rows one group after another, b [groups, K, N] a matrix per group,
// offs [groups] int32 on a's device the groups' cumulative row ends (as
// torch._grouped_mm takes them): out[rows of g] = a[rows of g] @ b[g], by one
// tcgemm call that reads offs on the device (no host sync: capturable in a
// CUDA graph). The result is a new [M, N] tensor; rows at or past offs[-1]
// are not written (left as allocated). There is no cuBLAS path to take what
// the kernels' tensor maps cannot address, so an operand is copied to a new
// contiguous tensor unless it is read in place (grouped_in_place): a when
// row-major, b when one op/ld describes every b[g] and its group stride is
// stride(0), each from a 16-byte aligned start with a leading dimension and
// group stride of whole 16-byte units. K and N must be multiples of 8 (rows
// of A, B and out in whole 16-byte units, whatever the copy).
inline at::Tensor grouped_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& offs) {
  auto call = [&] { return " (a: " + describe(a) + ", b: " + describe(b) + ", offs: " + describe(offs) + ")"; };
  TCGEMM_REFUSE(ValueError, a.dim() == 2 && b.dim() == 3,
                "tcgemm.grouped_mm: a must be 2-D [M, K] and b 3-D [groups, K, N]" + call());
  TCGEMM_REFUSE(ValueError, offs.dim() == 1 && offs.size(0) == b.size(0),
                "tcgemm.grouped_mm: offs must be 1-D with one end per group of b (" + std::to_string(b.size(0)) + ")" +
                    call());
  TCGEMM_REFUSE(TypeError, offs.scalar_type() == at::kInt,
                std::string("tcgemm.grouped_mm: offs must be int32, got ") + dtype_name(offs.scalar_type()) + call());
  TCGEMM_REFUSE(ValueError, b.size(0) >= 1 && b.size(0) <= kMaxGroups,
                "tcgemm.grouped_mm: the groups must number 1 to " + std::to_string(kMaxGroups) + call());
  TCGEMM_REFUSE(ValueError, offs.is_cuda() && offs.device() == a.device(),
                "tcgemm.grouped_mm: offs must be on a's CUDA device" + call());
  check_tensors(a, b.select(0, 0), nullptr, call, OperandNames{"a", "b", "a @ b[g]", "tcgemm.grouped_mm(a, b, offs)"});
  const int64_t m = a.size(0), n = b.size(2);
  at::Tensor out = at::empty({m, n}, a.options());
  if (m == 0 || n == 0) return out;
  TCGEMM_REFUSE(ValueError, a.size(1) % 8 == 0 && n % 8 == 0,
                "tcgemm.grouped_mm: K and N must be multiples of 8 (the kernels' rows are whole 16-byte units; "
                "there is no cuBLAS path for an M-grouped call), got K=" +
                    std::to_string(a.size(1)) + " and N=" + std::to_string(n) + call());
  const auto address = [](const at::Tensor& x) { return reinterpret_cast<uint64_t>(x.data_ptr()); };
  const bool a_in_place =
      grouped_in_place(operand_layout(a.size(0), a.size(1), a.stride(0), a.stride(1)), true, address(a));
  const at::Tensor a2 = a_in_place ? a : a.clone(at::MemoryFormat::Contiguous);
  const bool b_in_place = grouped_in_place(operand_layout(b.size(1), b.size(2), b.stride(1), b.stride(2)), false,
                                           address(b), b.size(0) == 1 ? 0 : b.stride(0));
  const at::Tensor b3 = b_in_place ? b : b.clone(at::MemoryFormat::Contiguous);
  const at::Tensor ends = offs.contiguous();
  Call c = make_call(a2, b3.select(0, 0), out, 1.0, 0.0);
  c.a = a2;  // (every group's matrix stays alive until the launch)
  c.b = b3;
  c.a_copied = !a_in_place;
  c.b_copied = !b_in_place;
  c.args.stride_b = b3.size(0) == 1 ? 0 : b3.stride(0);
  c.args.group_ends = ends.data_ptr<int32_t>();
  c.args.groups = b3.size(0);
  run(c);
  return out;
}

// Whether the library takes a fused call's operands as laid out: checked
// cheaply (K, base addresses, leading dimensions a multiple of 8 elements)
// and, where that flags one, by the library's own plan (a one-row operand's
// leading dimension is not used, so the cheap check alone could flag it).
inline bool fusable_layout(const Call& c) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (c.args.k % 8 == 0 && c.args.lda % 8 == 0 && c.args.ldb % 8 == 0 && aligned(c.args.a) && aligned(c.args.b))
    return true;
  const c10::cuda::CUDAGuard guard(c.out.device());
  return plan(c.args).status != Status::unsupported;
}

// t contiguous with its data 16-byte aligned: a contiguous tensor whose data
// starts elsewhere (a view at an odd offset) is copied, as a strided one is.
inline at::Tensor contiguous_aligned(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  return reinterpret_cast<uintptr_t>(c.data_ptr()) % 16 == 0 ? c : c.clone();
}

// act(x2 @ weight^T + bias) into out2, both [M, .] with rows contiguous: the
// fused call of linear and linear_out, checked and run. `call` describes the
// caller's tensors for messages; out2 is checked as the caller's where
// `caller_out` (linear_out), and is linear's own new tensor otherwise.
template <class Describe>
void run_linear(const at::Tensor& x2, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                int64_t activation, const at::Tensor& out2, bool caller_out, const Describe& call,
                const Options& options = {}) {
  TCGEMM_REFUSE(ValueError, activation >= 0 && activation <= 4,
                "tcgemm.linear: unknown activation " + std::to_string(activation) +
                    " (0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 silu)" + call());
  const int64_t n = weight.size(0), k = weight.size(1);
  check_tensors(x2, weight.t(), caller_out ? &out2 : nullptr, call,
                OperandNames{"x", "weight", "x @ weight^T", "tcgemm.linear(x, weight, bias, activation)"});
  Call c = make_call(x2, weight.t(), out2, 1.0, 0.0);
  at::Tensor b;
  if (bias.has_value()) {
    b = *bias;
    TCGEMM_REFUSE(ValueError, b.dim() == 1 && b.size(0) == n,
                  "tcgemm.linear: bias must be [" + std::to_string(n) + "], got " + dims(b.sizes()) + call());
    TCGEMM_REFUSE(TypeError, b.scalar_type() == x2.scalar_type() || b.scalar_type() == at::kFloat,
                  std::string("tcgemm.linear: bias must be ") + dtype_name(x2.scalar_type()) + " or float32, got " +
                      dtype_name(b.scalar_type()) + call());
    TCGEMM_REFUSE(ValueError, b.is_cuda() && b.device() == x2.device(),
                  "tcgemm.linear: bias must be on x's device (" + x2.device().str() + ")" + call());
    if (b.stride(0) != 1) b = b.contiguous();
  }
  // The fused epilogue, set on whichever operands the call runs with.
  const auto fuse = [&](Call& on) {
    if (b.defined()) {
      on.args.bias = b.data_ptr();
      on.args.bias_type = b.scalar_type() == at::kFloat ? BiasType::f32 : BiasType::same;
    }
    on.args.activation = static_cast<Activation>(activation);
  };
  fuse(c);
  if (c.args.fused_epilogue() && !fusable_layout(c)) {
    // No cuBLAS fallback can fuse a bias or activation, so a fused call needs
    // operands tcgemm's kernels can load (16-byte aligned rows). Where x or
    // the weight is a view they cannot, it is copied contiguous; where K is
    // not a multiple of 8, both are copied with K zero-padded to one: zeros
    // at the end of every element's in-order sum add nothing, so the bits
    // are those of the product over K.
    const int64_t pad = (8 - k % 8) % 8;
    const at::Tensor xp = pad > 0 ? at::constant_pad_nd(x2, {0, pad}) : contiguous_aligned(x2);
    const at::Tensor wp = pad > 0 ? at::constant_pad_nd(weight, {0, pad}) : contiguous_aligned(weight);
    c = make_call(xp, wp.t(), out2, 1.0, 0.0);
    fuse(c);
  }
  if (caller_out) writable(out2);
  run(c, options);
  if (caller_out) mark_written(out2);
}

// " (x: ..., weight: ..., bias: ..., out: ...)": a linear call as messages show it.
inline std::string describe_linear(const at::Tensor& x, const at::Tensor& weight,
                                   const std::optional<at::Tensor>& bias, const at::Tensor* out) {
  std::string s = " (x: " + describe(x) + ", weight: " + describe(weight);
  if (bias.has_value()) s += ", bias: " + describe(*bias);
  if (out != nullptr) s += ", out: " + describe(*out);
  return s + ")";
}

// y = act(x @ weight^T + bias): nn.Linear with the fused epilogue. x is
// [..., K] (any leading dimensions, viewed as M x K without a copy when its
// rows are evenly spaced), weight [N, K] (passed transposed, op T, no copy),
// bias [N] of x's dtype or float32, or undefined; activation a
// tcgemm::Activation (0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 silu). The
// result is a new [..., N] tensor.
inline at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         int64_t activation) {
  auto call = [&] { return describe_linear(x, weight, bias, nullptr); };
  TCGEMM_REFUSE(ValueError, x.dim() >= 1, "tcgemm.linear: x must have at least 1 dimension" + call());
  TCGEMM_REFUSE(ValueError, weight.dim() == 2, "tcgemm.linear: weight must be [out_features, in_features]" + call());
  TCGEMM_REFUSE(ValueError, x.size(-1) == weight.size(1),
                "tcgemm.linear: x's last dimension " + std::to_string(x.size(-1)) + " must equal weight's in_features " +
                    std::to_string(weight.size(1)) + call());
  const int64_t n = weight.size(0), k = weight.size(1);
  // x as M x K: a view when its rows are evenly spaced (reshape copies otherwise).
  // M from the leading dimensions, not -1: with K = 0 (C = act(bias)) -1 is ambiguous.
  const int64_t m = c10::multiply_integers(x.sizes().begin(), x.sizes().end() - 1);
  const at::Tensor x2 = x.reshape({m, k});
  std::vector<int64_t> out_shape(x.sizes().begin(), x.sizes().end());
  out_shape.back() = n;
  // N not a multiple of 8 and more than one row: computed into rows padded
  // to 8 columns and returned copied contiguous, as F.linear's result is
  // (pads_result_rows; and no cuBLAS fallback can fuse a bias or activation).
  const bool padded = pads_result_rows(m, n, k, bias.has_value() || activation != 0);
  const at::Tensor out = new_result(m, n, padded, x.options());
  run_linear(x2, weight, bias, activation, out, false, call);
  return contiguous_result(out, padded).view(out_shape);
}

// out = act(x @ weight^T + bias) for a 2-D x [M, K] and an existing out
// [M, N] whose rows are contiguous (out.stride(1) == 1): linear without
// allocating, as mm_out is mm, on at most sm_count SMs (0: all). A fused
// call (bias or activation) needs out's rows 16 bytes apart (out.stride(0)
// a multiple of 8 elements), as the kernels store them; it is refused
// otherwise, with nothing written.
inline void linear_out(const at::Tensor& x, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                       int64_t activation, const at::Tensor& out, int64_t sm_count = 0) {
  const Options options = sm_bound(sm_count);
  auto call = [&] { return describe_linear(x, weight, bias, &out); };
  TCGEMM_REFUSE(ValueError, x.dim() == 2, "tcgemm.linear_out: x must be 2-D [M, in_features]" + call());
  TCGEMM_REFUSE(ValueError, weight.dim() == 2, "tcgemm.linear: weight must be [out_features, in_features]" + call());
  TCGEMM_REFUSE(ValueError, x.size(1) == weight.size(1),
                "tcgemm.linear: x's last dimension " + std::to_string(x.size(1)) + " must equal weight's in_features " +
                    std::to_string(weight.size(1)) + call());
  run_linear(x, weight, bias, activation, out, true, call, options);
}

// plan_of() for mm (out undefined: a new tensor, as mm would allocate) or mm_out.
inline std::vector<std::string> plan_call(const at::Tensor& a, const at::Tensor& b, const at::Tensor* out,
                                          double alpha, double beta) {
  check_tensors(a, b, out);
  const at::Tensor c = out != nullptr ? *out
                                      : new_result(a.size(0), b.size(1), pads_result_rows(a.size(0), b.size(1), a.size(1)),
                                                   a.options());
  return plan_of(make_call(a, b, c, alpha, beta));
}

}  // namespace tcgemm::torch_glue
