#include "common/validate.hpp"

#include <sstream>

namespace tcgemm::detail {

std::string describe(const GemmArgs& a) {
  std::ostringstream s;
  s << "m=" << a.m << " n=" << a.n << " k=" << a.k << " dtype=";
  const int dt = static_cast<int>(a.dtype);
  if (dt == 0 || dt == 1) s << to_string(a.dtype); else s << "<" << dt << ">";
  s << " layout=";
  for (Op op : {a.op_a, a.op_b}) {
    const int o = static_cast<int>(op);
    if (o == 0 || o == 1) s << to_string(op); else s << "<" << o << ">";
  }
  s << " lda=" << a.lda << " ldb=" << a.ldb << " ldc=" << a.ldc;
  return s.str();
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
    std::ostringstream m;
    m << "leading dimension " << name << "=" << ld << " is smaller than the row length " << need << " of "
      << shape << " (stored row-major as " << s.rows << " x " << s.cols << ")";
    return fail(m.str(), a);
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

  if (a.m == 0 || a.n == 0) return {};  // nothing is read or written
  if (a.c == nullptr) return fail("C is a null pointer", a);
  if (a.k == 0) return {};  // A and B are not read
  if (a.a == nullptr) return fail("A is a null pointer", a);
  if (a.b == nullptr) return fail("B is a null pointer", a);
  return {};
}

}  // namespace tcgemm::detail
