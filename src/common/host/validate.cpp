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
  // A batched call, where it is one (or where the batch itself is wrong).
  if (a.batch != 1)
    s += " batch=" + std::to_string(a.batch) + " stride_a=" + std::to_string(a.stride_a) +
         " stride_b=" + std::to_string(a.stride_b) + " stride_c=" + std::to_string(a.stride_c);
  // An M-grouped call (or one whose group count is wrong).
  if (a.groups != 0) s += " groups=" + std::to_string(a.groups) + " stride_b=" + std::to_string(a.stride_b);
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

// The batch (GemmArgs::batch, stride_*): its count, and strides that keep
// every matrix addressable and C's matrices apart. Called once the shapes and
// leading dimensions are known to be valid.
std::string check_batch(const GemmArgs& a) {
  constexpr int64_t kMaxBatch = (int64_t{1} << 31) - 1;  // the kernels' batch index is 32-bit
  if (a.batch < 0) return fail("batch must not be negative, not " + std::to_string(a.batch), a);
  if (a.batch > kMaxBatch) return fail("batch above 2^31-1 is not supported", a);
  // An empty batch writes nothing (as M or N = 0); a batch of one is the
  // plain call: neither uses the strides.
  if (a.batch <= 1) return {};
  if (a.stride_a < 0 || a.stride_b < 0 || a.stride_c < 0)
    return fail("batch strides must not be negative (0 repeats A or B for every batch)", a);
  // The last matrix of each operand must be addressable: (batch - 1) * stride
  // plus the matrix's own span in 64-bit element offsets.
  const struct {
    const char* name;
    int64_t stride, rows, ld;
  } operands[] = {{"stride_a", a.stride_a, stored_shape_a(a).rows, a.lda},
                  {"stride_b", a.stride_b, stored_shape_b(a).rows, a.ldb},
                  {"stride_c", a.stride_c, a.m, a.ldc}};
  for (const auto& o : operands) {
    int64_t last = 0, span = 0, end = 0;
    if (__builtin_mul_overflow(a.batch - 1, o.stride, &last) || __builtin_mul_overflow(o.rows, o.ld, &span) ||
        __builtin_add_overflow(last, span, &end))
      return fail(std::string("(batch - 1) x ") + o.name + " plus one matrix overflows 64-bit element offsets", a);
  }
  if (a.m == 0 || a.n == 0) return {};  // no C is written
  // C's matrices must be disjoint: a tile of one batch must never write
  // another's elements. Two layouts are: stacked (each C_i ends before the
  // next starts) and side by side (the C_i are column blocks of rows ldc
  // long, e.g. attention heads in one [M, heads * N] tensor).
  const bool stacked = a.stride_c >= (a.m - 1) * a.ldc + a.n;  // (cannot overflow: checked above)
  const bool side_by_side = a.stride_c >= a.n && (a.batch - 1) * a.stride_c + a.n <= a.ldc;
  if (!stacked && !side_by_side)
    return fail("the batch's C matrices overlap: stride_c=" + std::to_string(a.stride_c) +
                    " must be at least (M - 1) * ldc + N = " + std::to_string((a.m - 1) * a.ldc + a.n) +
                    " (matrices one after another) or, with N <= stride_c, keep (batch - 1) * stride_c + N <= ldc "
                    "(matrices side by side in C's rows)",
                a);
  return {};
}

// An M-grouped call (GemmArgs::groups): what its kernels take, and B's
// matrices addressable. The ends themselves live on the device and are
// clamped there (common/m_groups.hpp), so no value of them is checked here.
std::string check_groups(const GemmArgs& a) {
  if (a.groups < 0) return fail("groups must not be negative, not " + std::to_string(a.groups), a);
  if (a.groups == 0) return {};
  if (a.groups > kMaxGroups)
    return fail("an M-grouped call has at most " + std::to_string(kMaxGroups) + " groups, not " +
                    std::to_string(a.groups),
                a);
  if (a.batch != 1) return fail("an M-grouped call is not also batched: batch must be 1", a);
  if (a.op_a != Op::N)
    return fail("an M-grouped call needs A stored K-major (op_a = N): each group's rows start at any row of A", a);
  if (a.fused_epilogue()) return fail("an M-grouped call has no fused epilogue (bias, activation)", a);
  if (a.stride_b < 0) return fail("stride_b must not be negative (0 uses one B for every group)", a);
  int64_t last = 0, span = 0, end = 0;
  if (__builtin_mul_overflow(a.groups - 1, a.stride_b, &last) ||
      __builtin_mul_overflow(stored_shape_b(a).rows, a.ldb, &span) || __builtin_add_overflow(last, span, &end))
    return fail("(groups - 1) x stride_b plus one matrix overflows 64-bit element offsets", a);
  if (a.group_ends == nullptr && a.m > 0 && a.n > 0) return fail("group_ends is a null pointer", a);
  if (reinterpret_cast<uintptr_t>(a.group_ends) % 4 != 0)
    return fail("group_ends is not aligned to its 4-byte (int32) elements", a);
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

  // (Groups first: an M-grouped call that is also batched hears that, not about the batch's strides.)
  if (auto r = check_groups(a); !r.empty()) return r;
  if (auto r = check_batch(a); !r.empty()) return r;

  if (a.m == 0 || a.n == 0) return {};  // nothing is read or written
  if (a.c == nullptr) return fail("C is a null pointer", a);
  if (a.k == 0) return {};  // A and B are not read
  if (a.a == nullptr) return fail("A is a null pointer", a);
  if (a.b == nullptr) return fail("B is a null pointer", a);
  return {};
}

}  // namespace tcgemm::detail
