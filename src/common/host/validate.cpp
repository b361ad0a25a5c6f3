#include "common/host/validate.hpp"

#include <algorithm>
#include <cstdint>
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

// Whether `count` matrices `stride` elements apart, each `rows` rows `ld`
// elements apart, are addressable in 64-bit byte offsets (2-byte elements):
// (count - 1) * stride + rows * ld, times 2, without overflow.
bool addressable(int64_t count, int64_t stride, int64_t rows, int64_t ld) {
  int64_t last = 0, span = 0, end = 0;
  return !(__builtin_mul_overflow(count - 1, stride, &last) || __builtin_mul_overflow(rows, ld, &span) ||
           __builtin_add_overflow(last, span, &end) || __builtin_mul_overflow(end, int64_t{2}, &end));
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
  // plus the matrix's own span in 64-bit byte offsets.
  const struct {
    const char* name;
    int64_t stride, rows, ld;
  } operands[] = {{"stride_a", a.stride_a, stored_shape_a(a).rows, a.lda},
                  {"stride_b", a.stride_b, stored_shape_b(a).rows, a.ldb},
                  {"stride_c", a.stride_c, a.m, a.ldc}};
  for (const auto& o : operands)
    if (!addressable(a.batch, o.stride, o.rows, o.ld))
      return fail(std::string("(batch - 1) x ") + o.name + " plus one matrix overflows 64-bit byte offsets", a);
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
  if (!addressable(a.groups, a.stride_b, stored_shape_b(a).rows, a.ldb))
    return fail("(groups - 1) x stride_b plus one matrix overflows 64-bit byte offsets", a);
  if (a.group_ends == nullptr && a.m > 0 && a.n > 0) return fail("group_ends is a null pointer", a);
  if (reinterpret_cast<uintptr_t>(a.group_ends) % 4 != 0)
    return fail("group_ends is not aligned to its 4-byte (int32) elements", a);
  return {};
}

// Byte positions, exact: 64-bit addresses plus offsets up to 2^96 (a batch
// index times a stride times an element), with no wrap to reason about.
using Wide = __int128;

// The elements of one operand: `count` matrices `stride` elements apart,
// each `rows` rows of `cols` elements, `ld` apart, of `element` bytes each,
// from `base`. (Sizes already checked: non-negative, ld >= cols.)
struct Extent {
  uintptr_t base;
  int64_t count, stride, rows, cols, ld, element;
  // The first byte of matrix p, and the end of its last row.
  Wide first(int64_t p) const { return Wide(base) + Wide(p) * stride * element; }
  Wide end(int64_t p) const { return first(p) + (Wide(rows - 1) * ld + cols) * element; }
};

// floor(x / y) for y > 0.
Wide floor_div(Wide x, Wide y) { return x / y - (x % y != 0 && x < 0 ? 1 : 0); }

// Whether row-strided matrices x and y (one matrix each) share a byte, when
// that is cheap to tell: exactly when their rows are equally far apart (the
// same leading dimension in bytes: in-place calls, and operands side by side
// in one buffer's rows); otherwise row by row over the one with fewer rows
// (a bias is one row), at most `*budget` of them. False when the budget ran
// out before an overlap showed.
bool matrices_overlap(const Extent& x, int64_t px, const Extent& y, int64_t py, int64_t* budget) {
  const Wide x0 = x.first(px), y0 = y.first(py);
  if (x.end(px) <= y0 || y.end(py) <= x0) return false;
  const Wide wx = Wide(x.cols) * x.element, wy = Wide(y.cols) * y.element;
  const Wide lx = Wide(x.ld) * x.element, ly = Wide(y.ld) * y.element;
  if (lx == ly) {
    // y's row j against x's row i: offsets d + t l for t = j - i in
    // [-(x.rows-1), y.rows-1]; the t that brings d + t l nearest below wx.
    const Wide d = y0 - x0;
    const Wide t = std::max(std::min(floor_div(wx - 1 - d, lx), Wide(y.rows - 1)), Wide(-(x.rows - 1)));
    return d + t * lx < wx && d + t * lx > -wy;
  }
  // Rows of `walked` (w bytes long, l apart, from w0) against those of
  // `fixed` (f bytes long, lf apart, from f0, `fixed_rows` of them).
  const bool walk_y = y.rows <= x.rows;
  const Wide f0 = walk_y ? x0 : y0, w0 = walk_y ? y0 : x0;
  const Wide f = walk_y ? wx : wy, w = walk_y ? wy : wx, lf = walk_y ? lx : ly, l = walk_y ? ly : lx;
  const int64_t fixed_rows = walk_y ? x.rows : y.rows, walked_rows = walk_y ? y.rows : x.rows;
  for (int64_t j = 0; j < walked_rows; ++j) {
    if (--*budget < 0) return false;
    // Walked row j starts d bytes from f0 (d may be negative) and meets
    // fixed row i, [i lf, i lf + f), when -w < d - i lf < f. The largest
    // i < fixed_rows with i lf < d + w is the one to test.
    const Wide d = w0 - f0 + Wide(j) * l;
    const Wide i = std::min(floor_div(d + w - 1, lf), Wide(fixed_rows - 1));
    if (i >= 0 && d - i * lf < f) return true;
  }
  return false;
}

// Whether some matrix of `written` shares a byte with some matrix of `read`,
// as far as a bounded amount of work can tell (see matrices_overlap).
bool extents_overlap(const Extent& written, const Extent& read) {
  // (Most calls end here: the operands lie in memory of their own.)
  if (written.end(written.count - 1) <= read.first(0) || read.end(read.count - 1) <= written.first(0)) return false;
  int64_t budget = 4096;
  for (int64_t p = 0; p < written.count; ++p) {
    for (int64_t q = 0; q < read.count; ++q) {
      if (--budget < 0) return false;
      if (matrices_overlap(read, q, written, p, &budget)) return true;
      if (read.stride == 0) break;
    }
    if (written.stride == 0) break;
  }
  return false;
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

  // A plain (or M-grouped) call's matrices addressable too (a batch's are checked above, B's groups too).
  const StoredShape sa = stored_shape_a(a), sb = stored_shape_b(a);
  if (a.batch <= 1) {
    const struct {
      const char* name;
      int64_t rows, ld;
    } operands[] = {{"A", sa.rows, a.lda}, {"B", sb.rows, a.ldb}, {"C", a.m, a.ldc}};
    for (const auto& o : operands)
      if (!addressable(1, 0, o.rows, o.ld))
        return fail(std::string(o.name) + "'s rows x leading dimension overflows 64-bit byte offsets", a);
  }

  if (a.m == 0 || a.n == 0 || a.batch == 0) return {};  // nothing is read or written
  if (a.c == nullptr) return fail("C is a null pointer", a);
  // Every operand on its elements' boundaries: fp16 and bf16 are 2 bytes.
  if (reinterpret_cast<uintptr_t>(a.c) % 2 != 0) return fail("C is not aligned to its 2-byte elements", a);
  const int64_t c_count = a.batch > 1 ? a.batch : 1;
  const Extent c{reinterpret_cast<uintptr_t>(a.c), c_count, a.stride_c, a.m, a.n, a.ldc, 2};
  if (a.bias != nullptr &&
      extents_overlap(c, Extent{reinterpret_cast<uintptr_t>(a.bias), 1, 0, 1, a.n, a.n,
                                a.bias_type == BiasType::f32 ? 4 : 2}))
    return fail("C overlaps the bias in memory: C is written while the bias is read", a);
  // An M-grouped call's ends are read by every tile (where its rows start),
  // while other tiles store C.
  if (a.grouped() && extents_overlap(c, Extent{reinterpret_cast<uintptr_t>(a.group_ends), 1, 0, 1, a.groups,
                                               a.groups, static_cast<int64_t>(sizeof(int32_t))}))
    return fail("C overlaps group_ends in memory: C is written while the groups' ends are read", a);
  if (!reads_a_and_b(a)) return {};  // A and B are not read
  if (a.a == nullptr) return fail("A is a null pointer", a);
  if (a.b == nullptr) return fail("B is a null pointer", a);
  if (reinterpret_cast<uintptr_t>(a.a) % 2 != 0) return fail("A is not aligned to its 2-byte elements", a);
  if (reinterpret_cast<uintptr_t>(a.b) % 2 != 0) return fail("B is not aligned to its 2-byte elements", a);
  // C must not share memory with what the call reads: tiles of C are stored
  // while other tiles still load A and B (no in-place products).
  const Extent read[] = {
      {reinterpret_cast<uintptr_t>(a.a), c_count, a.batch > 1 ? a.stride_a : 0, sa.rows, sa.cols, a.lda, 2},
      {reinterpret_cast<uintptr_t>(a.b), a.grouped() ? a.groups : c_count,
       a.batch > 1 || a.grouped() ? a.stride_b : 0, sb.rows, sb.cols, a.ldb, 2}};
  for (int i = 0; i < 2; ++i)
    if (extents_overlap(c, read[i]))
      return fail(std::string("C overlaps ") + (i == 0 ? "A" : "B") +
                      " in memory: C is written while it is read (write C to memory of its own)",
                  a);
  return {};
}

}  // namespace tcgemm::detail
