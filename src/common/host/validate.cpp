#include "common/host/validate.hpp"

#include <string>

namespace tcgemm::detail {

// Messages are built with std::to_string and concatenation, not iostreams:
// the library is loaded into processes (PyTorch) whose iostream and locale
// state it must not depend on.
namespace {
// An enum's name, or "<value>" for a value outside the enum.
template <typename Enum>
std::string enum_name(Enum e) {
  const int v = static_cast<int>(e);
  if (v == 0 || v == 1) return to_string(e);
  std::string s("<");
  s.append(std::to_string(v)).append(">");
  return s;
}
}  // namespace

std::string describe(const GemmArgs& a) {
  std::string s = "m=" + std::to_string(a.m) + " n=" + std::to_string(a.n) + " k=" + std::to_string(a.k);
  s.append(" dtype=").append(enum_name(a.dtype)).append(" layout=").append(enum_name(a.op_a)).append(enum_name(a.op_b));
  s += " lda=" + std::to_string(a.lda) + " ldb=" + std::to_string(a.ldb) + " ldc=" + std::to_string(a.ldc);
  // The fused epilogue, where there is one (a plain call reads as before).
  if (a.bias != nullptr) s += a.bias_type == BiasType::f32 ? " bias=f32" : " bias";
  if (a.activation != Activation::none) s += std::string(" activation=") + to_string(a.activation);
  return s;
}

StoredShape stored_shape_a(const GemmArgs& a) {
  return a.op_a == Op::N ? StoredShape{a.m, a.k} : StoredShape{a.k, a.m};
}
StoredShape stored_shape_b(const GemmArgs& a) {
  return a.op_b == Op::N ? StoredShape{a.k, a.n} : StoredShape{a.n, a.k};
}

namespace {

std::string fail(const std::string& what, const GemmArgs& a) {
  return what + " (" + describe(a) + ")";
}

// The leading dimension of a row-major matrix must cover its row, and be at
// least 1 so that an empty matrix still has a well-formed description.
std::string check_ld(const char* name, int64_t ld, StoredShape s, const char* shape, const GemmArgs& a) {
  const int64_t need = s.cols > 1 ? s.cols : 1;
  if (ld < need) {
    return fail("leading dimension " + std::string(name) + "=" + std::to_string(ld) +
                    " is smaller than the row length " + std::to_string(need) + " of " + shape +
                    " (stored row-major as " + std::to_string(s.rows) + " x " + std::to_string(s.cols) + ")",
                a);
  }
  return {};
}

}  // namespace

std::string check_args(const GemmArgs& a) {
  const int dt = static_cast<int>(a.dtype);
  if (dt != 0 && dt != 1)
    return fail("unknown dtype " + std::to_string(dt) + " (0 = fp16, 1 = bf16)", a);
  const int oa = static_cast<int>(a.op_a), ob = static_cast<int>(a.op_b);
  if (oa != 0 && oa != 1) return fail("unknown op_a " + std::to_string(oa) + " (0 = N, 1 = T)", a);
  if (ob != 0 && ob != 1) return fail("unknown op_b " + std::to_string(ob) + " (0 = N, 1 = T)", a);
  if (a.m < 0 || a.n < 0 || a.k < 0) return fail("sizes must not be negative", a);
  // The kernels index with 32-bit coordinates.
  constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;
  if (a.m > kMaxDim || a.n > kMaxDim || a.k > kMaxDim)
    return fail("sizes above 2^31-1 are not supported", a);

  const char* a_shape = a.op_a == Op::N ? "A (op_a=N: M x K)" : "A (op_a=T: K x M)";
  const char* b_shape = a.op_b == Op::N ? "B (op_b=N: K x N)" : "B (op_b=T: N x K)";
  if (auto r = check_ld("lda", a.lda, stored_shape_a(a), a_shape, a); !r.empty()) return r;
  if (auto r = check_ld("ldb", a.ldb, stored_shape_b(a), b_shape, a); !r.empty()) return r;
  if (auto r = check_ld("ldc", a.ldc, StoredShape{a.m, a.n}, "C (M x N)", a); !r.empty()) return r;

  const int act = static_cast<int>(a.activation), bias_type = static_cast<int>(a.bias_type);
  if (act < 0 || act > 4)
    return fail("unknown activation " + std::to_string(act) + " (0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 silu)", a);
  if (bias_type != 0 && bias_type != 1)
    return fail("unknown bias_type " + std::to_string(bias_type) + " (0 = the call's dtype, 1 = fp32)", a);
  if (a.bias != nullptr) {
    const uintptr_t element = a.bias_type == BiasType::f32 ? 4 : 2;
    if (reinterpret_cast<uintptr_t>(a.bias) % element != 0)
      return fail("bias is not aligned to its " + std::to_string(element) + "-byte elements", a);
  }

  if (a.m == 0 || a.n == 0) return {};  // nothing is read or written
  if (a.c == nullptr) return fail("C is a null pointer", a);
  if (a.k == 0) return {};  // A and B are not read
  if (a.a == nullptr) return fail("A is a null pointer", a);
  if (a.b == nullptr) return fail("B is a null pointer", a);
  return {};
}

}  // namespace tcgemm::detail
