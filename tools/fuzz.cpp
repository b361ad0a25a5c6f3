// `tcgemm check --fuzz N --seed S`: random cases against the reference GEMM.
//
// Case i is drawn from seed S + i alone, so `--fuzz 1 --seed S+i` replays it
// (every failure prints that command). A case draws:
//   M, N, K    in [1, 8192], skewed to the edges: 1, tile multiples +-1,
//              primes, else log-uniform; K = 0 now and then; the product
//              capped so that one case stays in the milliseconds
//   dtype, layout, alpha, beta (0 half of the time)
//   a fused epilogue one case in four: an activation and a bias (none, of the
//   output's type, or fp32), not both none
//   leading dimensions: rounded up to 8 (+ padding), packed, or odd (fallback)
//   base pointers misaligned by one element now and then (fallback)
// and checks:
//   - every output element against a float64 reference, within the
//     element-wise bound of support/error_bound.hpp (one rounding of an fp32
//     sum of K terms). tcgemm's own code (its kernels, the K == 0 scale) must
//     meet it in every element. The cuBLAS fallback is cuBLAS's numerics: on
//     some paths it rounds alpha * op(A) op(B) to fp16/bf16 before adding
//     beta * C, so elements beyond the bound there are counted and reported
//     (not failures), and the fallback is held to the bound that allows that
//     one extra rounding instead, which a wrong result still breaks;
//   - the normwise relative error against tcgemm::reference_gemm (fp32, K in
//     order) is below 2 u + 4 K 2^-24 (u: the output's unit roundoff), zero
//     outputs exact. The element-wise bound is the stronger statement per
//     element; this one stays as an independent second reference (the
//     library's own fp32 GEMM), and its worst ratio compares with earlier runs;
//   - no output is NaN/Inf (C starts as NaN when beta = 0: an unwritten
//     element shows) and nothing outside C changed: the row padding between
//     N and ldc and a guard after the last row keep their random contents;
//   - the backend is tcgemm's kernel when TMA can take the operands, the
//     cuBLAS fallback when it cannot; with a fused epilogue, where no kernel
//     can take it, the call is refused and C left as it was (cuBLAS cannot
//     fuse it); fused cases are held to the element-wise bound of the fused
//     epilogue and compared with no cuBLAS;
//   - with alpha = 1, beta = 0 and at least one 128x128 tile per SM (where
//     cuBLAS has no reason to split K), the same bits as cuBLAS;
//   - with --all-configs, every built-in configuration gives the automatic
//     choice's bits (and so meets the element-wise bound too).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "arg_parser.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "progress.hpp"
#include "support/compare.hpp"
#include "support/elementwise.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

constexpr int64_t kMaxDim = 8192;
constexpr double kMaxMacs = 4.0e9;       // M * N * K per case
constexpr int64_t kMaxCElems = 1 << 24;  // C is copied to the host whole
constexpr int64_t kGuard = 64;           // elements after each buffer's last row

struct FuzzCase {
  uint64_t seed = 0;
  DType dtype = DType::f16;
  Layout layout;
  Shape shape;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t off_a = 0, off_b = 0, off_c = 0;  // elements between allocation and operand
  float alpha = 1.0f, beta = 0.0f;
  FusedEpilogue fused;  // none unless drawn (or given as activation=.. bias=..)
};

int64_t draw_dim(std::mt19937_64& rng) {
  static const int64_t kPrimes[] = {2, 3, 5, 7, 13, 31, 61, 127, 251, 509, 1021, 2039, 4093, 8191};
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double r = u(rng);
  if (r < 0.08) return 1;
  if (r < 0.35) {  // a tile multiple, +-1
    const int64_t tiles[] = {16, 64, 128, 192, 256};
    const int64_t t = tiles[rng() % 5];
    const int64_t m = 1 + static_cast<int64_t>(rng() % 8);
    return std::clamp<int64_t>(t * m + static_cast<int64_t>(rng() % 3) - 1, 1, kMaxDim);
  }
  if (r < 0.5) return kPrimes[rng() % std::size(kPrimes)];
  return std::clamp<int64_t>(static_cast<int64_t>(std::exp(u(rng) * std::log(static_cast<double>(kMaxDim)))), 1,
                             kMaxDim);
}

// A leading dimension for stored rows of `cols` elements (at least 1, as in
// BLAS): mostly rounded up to a multiple of 8 elements, with or without
// extra padding (TMA needs 16-byte rows: tcgemm's kernel takes any M, N, K
// so), sometimes packed (ld = cols: the fallback unless cols % 8 == 0),
// sometimes odd (always the fallback).
int64_t draw_ld(std::mt19937_64& rng, int64_t cols) {
  const int64_t base = std::max<int64_t>(cols, 1);
  const uint64_t r = rng() % 10;
  if (r < 5) return (base + 7) / 8 * 8;
  if (r < 7) return (base + 7) / 8 * 8 + 8 * static_cast<int64_t>(1 + rng() % 8);
  if (r < 9) return base;
  return base + 1 + 2 * static_cast<int64_t>(rng() % 4) + (base % 2 == 0 ? 0 : 1);
}

FuzzCase draw_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  FuzzCase c;
  c.seed = seed;
  c.dtype = rng() % 2 ? DType::bf16 : DType::f16;
  c.layout = Layout{rng() % 2 ? Op::T : Op::N, rng() % 2 ? Op::T : Op::N};
  do {
    c.shape = Shape{draw_dim(rng), draw_dim(rng), draw_dim(rng)};
  } while (static_cast<double>(c.shape.m) * c.shape.n * c.shape.k > kMaxMacs || c.shape.m * c.shape.n > kMaxCElems);
  if (rng() % 50 == 0) c.shape.k = 0;
  const Shape& s = c.shape;
  c.lda = draw_ld(rng, c.layout.a == Op::N ? s.k : s.m);
  c.ldb = draw_ld(rng, c.layout.b == Op::N ? s.n : s.k);
  c.ldc = draw_ld(rng, s.n);
  if (rng() % 20 == 0) c.off_a = 1;
  if (rng() % 20 == 0) c.off_b = 1;
  if (rng() % 20 == 0) c.off_c = 1;
  const float alphas[] = {1.0f, 1.0f, 0.5f, -2.0f, 0.0f};
  c.alpha = alphas[rng() % std::size(alphas)];
  c.beta = rng() % 2 ? 0.0f : (rng() % 2 ? 1.0f : -0.75f);
  // (Drawn last: the cases of every seed before this draw are unchanged.)
  if (rng() % 4 == 0) {
    c.fused.activation = static_cast<Activation>(rng() % 5);
    c.fused.bias = static_cast<int>(rng() % 3);
    if (!c.fused.any()) c.fused.bias = 1;
  }
  return c;
}

// Rows x columns of each operand as stored (row-major), leading dimensions.
struct Storage {
  int64_t rows, cols, ld;
  int64_t elems(int64_t off) const { return off + (rows > 0 ? (rows - 1) * ld + cols : 0) + kGuard; }
};
Storage storage_a(const FuzzCase& c) {
  return c.layout.a == Op::N ? Storage{c.shape.m, c.shape.k, c.lda} : Storage{c.shape.k, c.shape.m, c.lda};
}
Storage storage_b(const FuzzCase& c) {
  return c.layout.b == Op::N ? Storage{c.shape.k, c.shape.n, c.ldb} : Storage{c.shape.n, c.shape.k, c.ldb};
}
Storage storage_c(const FuzzCase& c) { return Storage{c.shape.m, c.shape.n, c.ldc}; }

// The case that describe() printed, edited or not: "m=.. n=.. k=.. f16 NT
// lda=.. ldb=.. ldc=.. offsets=a,b,c alpha=.. beta=.." (any order; the
// inputs come from `seed`). Empty optional on a malformed string, or on one
// whose buffers cannot be laid out (a leading dimension shorter than its
// row, more than 2^40 elements): then `why` says which.
std::optional<FuzzCase> parse_case(const std::string& text, uint64_t seed, std::string* why) {
  FuzzCase c;
  c.seed = seed;
  bool have_m = false, have_n = false, have_k = false;
  std::set<std::string> seen;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t end = std::min(text.find(' ', pos), text.size());
    const std::string word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    const size_t eq = word.find('=');
    const std::string key = word.substr(0, eq), value = eq == std::string::npos ? "" : word.substr(eq + 1);
    const bool is_dtype = eq == std::string::npos && (key == "f16" || key == "bf16");
    const std::vector<Layout> layout = eq == std::string::npos ? parse_layouts(key) : std::vector<Layout>{};
    // Each field once (a dtype, a layout, each key=value): a second would
    // silently win over the first.
    if (!seen.insert(is_dtype ? "dtype" : layout.size() == 1 ? "layout" : key).second) return std::nullopt;
    // (Sizes as the library takes them; leading dimensions and offsets as a buffer can hold them.)
    auto num = [&](int64_t lo, int64_t hi = int64_t{1} << 40) { return parse_int(value, lo, hi); };
    if (is_dtype) {
      c.dtype = key == "f16" ? DType::f16 : DType::bf16;
    } else if (layout.size() == 1) {
      c.layout = layout[0];
    } else if (key == "m" || key == "n" || key == "k" || key == "lda" || key == "ldb" || key == "ldc") {
      const bool size = key.size() == 1;
      const auto v = num(0, size ? (int64_t{1} << 31) - 1 : int64_t{1} << 40);
      if (!v) return std::nullopt;
      // (A leading dimension left out is the packed row; one given is the call's, at least 1.)
      if (!size && *v == 0) {
        *why = key + "=0: a leading dimension is at least 1 (leave it out for packed rows)";
        return std::nullopt;
      }
      int64_t* field[] = {&c.shape.m, &c.shape.n, &c.shape.k, &c.lda, &c.ldb, &c.ldc};
      const char* names[] = {"m", "n", "k", "lda", "ldb", "ldc"};
      for (int i = 0; i < 6; ++i)
        if (key == names[i]) *field[i] = *v;
      have_m |= key == "m";
      have_n |= key == "n";
      have_k |= key == "k";
    } else if (key == "offsets") {
      // Three element counts, "a,b,c", each 0 to 2^20.
      const size_t c1 = value.find(','), c2 = c1 == std::string::npos ? c1 : value.find(',', c1 + 1);
      if (c2 == std::string::npos) return std::nullopt;
      const auto a = parse_int(value.substr(0, c1), 0, int64_t{1} << 20);
      const auto b = parse_int(value.substr(c1 + 1, c2 - c1 - 1), 0, int64_t{1} << 20);
      const auto cc = parse_int(value.substr(c2 + 1), 0, int64_t{1} << 20);
      if (!a || !b || !cc) return std::nullopt;
      c.off_a = *a;
      c.off_b = *b;
      c.off_c = *cc;
    } else if (key == "activation") {
      if (!c.fused.set_activation(value)) return std::nullopt;
    } else if (key == "bias") {
      if (!c.fused.set_bias(value)) return std::nullopt;
    } else if (key == "alpha" || key == "beta") {
      char* rest = nullptr;
      const float v = std::strtof(value.c_str(), &rest);
      if (value.empty() || *rest != '\0') return std::nullopt;
      (key == "alpha" ? c.alpha : c.beta) = v;
    } else {
      return std::nullopt;
    }
  }
  if (!have_m || !have_n || !have_k) return std::nullopt;
  const Shape& s = c.shape;
  if (c.lda == 0) c.lda = std::max<int64_t>(1, c.layout.a == Op::N ? s.k : s.m);
  if (c.ldb == 0) c.ldb = std::max<int64_t>(1, c.layout.b == Op::N ? s.n : s.k);
  if (c.ldc == 0) c.ldc = std::max<int64_t>(1, s.n);
  // (The library refuses such calls itself; the tool must first lay out
  // and fill their buffers.)
  const std::pair<const char*, Storage> operands[] = {{"lda", storage_a(c)}, {"ldb", storage_b(c)}, {"ldc", storage_c(c)}};
  for (const auto& [name, st] : operands) {
    if (st.ld < st.cols) {
      *why = format("%s=%lld is shorter than the operand's stored row of %lld elements", name,
                    static_cast<long long>(st.ld), static_cast<long long>(st.cols));
      return std::nullopt;
    }
    constexpr int64_t kMaxElems = int64_t{1} << 40;
    if (st.rows > 1 && st.ld > (kMaxElems - st.cols) / (st.rows - 1)) {
      *why = format("%s=%lld over %lld rows is more than 2^40 elements", name, static_cast<long long>(st.ld),
                    static_cast<long long>(st.rows));
      return std::nullopt;
    }
  }
  return c;
}

std::string describe(const FuzzCase& c) {
  return format("m=%lld n=%lld k=%lld %s %s lda=%lld ldb=%lld ldc=%lld offsets=%lld,%lld,%lld alpha=%g beta=%g",
                static_cast<long long>(c.shape.m), static_cast<long long>(c.shape.n),
                static_cast<long long>(c.shape.k), to_string(c.dtype), c.layout.str().c_str(),
                static_cast<long long>(c.lda), static_cast<long long>(c.ldb), static_cast<long long>(c.ldc),
                static_cast<long long>(c.off_a), static_cast<long long>(c.off_b), static_cast<long long>(c.off_c),
                c.alpha, c.beta) +
         (c.fused.any() ? format(" activation=%s bias=%s", to_string(c.fused.activation), c.fused.bias_name())
                        : std::string());
}

// The normwise bound against the reference (see the file comment).
double fuzz_bound(DType dtype, int64_t k) {
  return 2.0 * support::unit_roundoff(dtype) + 4.0 * static_cast<double>(k) * std::ldexp(1.0, -24);
}

// Bit identity with cuBLAS, by K: cases where tcgemm's kernel ran with
// alpha = 1, beta = 0 and at least one 128x128 tile per SM.
constexpr int64_t kKBuckets[] = {64, 256, 1024, 4096, INT64_MAX};
constexpr int kNumKBuckets = 5;
int k_bucket(int64_t k) {
  int b = 0;
  while (k >= kKBuckets[b]) ++b;
  return b;
}

// How many cases beyond the bound the summary names, one line each.
constexpr size_t kMaxFallbackRepros = 5;

struct Totals {
  int64_t cases = 0, failed = 0, own = 0, fallback = 0, none = 0;
  int64_t fused = 0, fused_refused = 0;  // cases with a fused epilogue: run, refused as documented
  int64_t identity_cases[kNumKBuckets] = {}, identity_held[kNumKBuckets] = {};
  double worst_ratio = 0.0;  // max of normwise error / bound over the cases
  // The element-wise bound: tcgemm's own code (its kernels and the K == 0
  // scale), where any element beyond it fails the case ...
  int64_t own_checked = 0, own_cases_beyond = 0, own_elements_beyond = 0;
  double own_worst = 0.0;  // max |c - ref| / bound over the elements
  // ... and the cuBLAS fallback, where elements beyond it are cuBLAS's own
  // numerics: counted, the first cases kept as repro lines.
  int64_t fallback_checked = 0, fallback_cases_beyond = 0, fallback_elements_beyond = 0;
  double fallback_worst = 0.0, fallback_worst_rounded_twice = 0.0;
  std::vector<std::string> fallback_repros;
};

// Where the outputs that break `bound` lie: 128x128 tiles and their counts
// (host side, only for a failing case).
std::string locate_errors(DType dtype, const ElementBuffer& x, const ElementBuffer& ref, int64_t off, int64_t ld,
                          int64_t m, int64_t n, double bound) {
  const std::vector<uint16_t> hx = support::download(x.data(), x.size()), hr = support::download(ref.data(), ref.size());
  auto value = [&](uint16_t bits) { return static_cast<double>(support::to_float(dtype, bits)); };
  double sum2 = 0.0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) sum2 += value(hr[off + r * ld + c]) * value(hr[off + r * ld + c]);
  const double tol = bound * std::sqrt(sum2 / static_cast<double>(m * n)) * 8.0;  // 8x the normwise bound, per element
  std::vector<std::pair<std::pair<int64_t, int64_t>, int64_t>> tiles;
  std::string first;
  for (int64_t tm = 0; tm < m; tm += 128)
    for (int64_t tn = 0; tn < n; tn += 128) {
      int64_t bad = 0;
      for (int64_t r = tm; r < std::min(m, tm + 128); ++r)
        for (int64_t c = tn; c < std::min(n, tn + 128); ++c) {
          const double d = std::fabs(value(hx[off + r * ld + c]) - value(hr[off + r * ld + c]));
          if (d > tol) {
            if (first.empty())
              first = format("first at (%lld, %lld): %g vs %g", static_cast<long long>(r), static_cast<long long>(c),
                             value(hx[off + r * ld + c]), value(hr[off + r * ld + c]));
            ++bad;
          }
        }
      if (bad > 0) tiles.push_back({{tm / 128, tn / 128}, bad});
    }
  std::string out = format("%zu 128x128 tiles hold elements off by more than %.2e; %s; tiles (m,n):count", tiles.size(),
                           tol, first.c_str());
  for (size_t i = 0; i < tiles.size() && i < 12; ++i)
    out += format(" (%lld,%lld):%lld", static_cast<long long>(tiles[i].first.first),
                  static_cast<long long>(tiles[i].first.second), static_cast<long long>(tiles[i].second));
  return out;
}

// One case on the device: A, B, C's initial state, and the outputs of
// tcgemm, the reference and cuBLAS, each C buffer with its offset, row
// padding and guard (C's random contents everywhere, its M x N part NaN when
// beta = 0: C must not be read then, and every element must be written).
struct CaseBuffers {
  CaseBuffers(const FuzzCase& fuzz_case, cudaStream_t s)
      : c(fuzz_case),
        sa(storage_a(c)),
        sb(storage_b(c)),
        sc(storage_c(c)),
        c_elems(static_cast<size_t>(sc.elems(c.off_c))),
        stream(s),
        a(static_cast<size_t>(sa.elems(c.off_a))),
        b(static_cast<size_t>(sb.elems(c.off_b))),
        c_init(c_elems),
        c_ours(c_elems),
        c_ref(c_elems),
        c_cublas(c_elems),
        bias(c.fused, c.dtype, c.shape.n, c.seed * 4 + 5, s) {
    const support::Distribution inputs = support::uniform(-1.0f, 1.0f);
    support::fill_random(c.dtype, a.data(), a.size(), inputs, c.seed * 4 + 1, stream);
    support::fill_random(c.dtype, b.data(), b.size(), inputs, c.seed * 4 + 2, stream);
    support::fill_random(c.dtype, c_init.data(), c_init.size(), inputs, c.seed * 4 + 3, stream);
    if (c.beta == 0.0f && c.shape.m > 0 && c.shape.n > 0)
      CHECK_CUDA(cudaMemset2DAsync(c_init.data() + c.off_c, static_cast<size_t>(sc.ld) * 2, 0xFF,
                                   static_cast<size_t>(c.shape.n) * 2, static_cast<size_t>(c.shape.m), stream));
    for (ElementBuffer* buf : {&c_ours, &c_ref, &c_cublas}) reset(*buf);
  }

  // The call, writing into `out` (one of the C buffers).
  GemmArgs args(ElementBuffer& out) const {
    Operands lds;
    lds.lda = sa.ld;
    lds.ldb = sb.ld;
    lds.ldc = sc.ld;
    GemmArgs g = make_args(c.dtype, c.layout, c.shape, lds, a.data() + c.off_a, b.data() + c.off_b,
                           out.data() + c.off_c, c.alpha, c.beta, stream);
    bias.apply(g);
    return g;
  }
  // `out` back to C's initial state.
  void reset(ElementBuffer& out) const {
    CHECK_CUDA(cudaMemcpyAsync(out.data(), c_init.data(), c_init.bytes(), cudaMemcpyDeviceToDevice, stream));
  }
  // The normwise comparison of `x`'s M x N part against `y`'s.
  support::CompareStats compare(const ElementBuffer& x, const ElementBuffer& y) const {
    return support::compare(c.dtype, x.data() + c.off_c, sc.ld, y.data() + c.off_c, sc.ld, c.shape.m, c.shape.n,
                            stream);
  }

  const FuzzCase& c;
  const Storage sa, sb, sc;
  const size_t c_elems;
  const cudaStream_t stream;
  ElementBuffer a, b, c_init, c_ours, c_ref, c_cublas;
  BiasVector bias;  // the fused epilogue's (none without one)
};

// Whether tcgemm's kernel of `family` can take the case's operands (TMA:
// 16-byte aligned bases, leading dimensions of whole 16 bytes).
bool kernel_takes(const CaseBuffers& buf, Backend family) {
  const FuzzCase& c = buf.c;
  return family != Backend::none && c.off_a == 0 && c.off_b == 0 && c.off_c == 0 && buf.sa.ld % 8 == 0 &&
         buf.sb.ld % 8 == 0 && buf.sc.ld % 8 == 0;
}

// The backend is tcgemm's kernel when TMA can take the operands, the cuBLAS
// fallback when it cannot, none when there is nothing to multiply.
void check_backend(const CaseBuffers& buf, const Plan& ours, Backend family, std::vector<std::string>& fails,
                   Totals& totals) {
  const FuzzCase& c = buf.c;
  // (K or alpha 0: no product, the scale kernel; M or N 0: nothing at all.)
  const bool no_product = c.shape.m == 0 || c.shape.n == 0 || c.shape.k == 0 || c.alpha == 0.0f;
  const Backend expected = no_product ? Backend::none : (kernel_takes(buf, family) ? family : Backend::cublas);
  if (ours.backend != expected)
    fails.push_back(format("ran %s, expected %s (%s)", to_string(ours.backend), to_string(expected),
                           ours.reason.c_str()));
  (ours.backend == Backend::none ? totals.none : ours.backend == Backend::cublas ? totals.fallback : totals.own) += 1;
}

// The normwise error against the reference GEMM, within fuzz_bound; exact
// where the reference is zero.
void check_normwise(const CaseBuffers& buf, std::vector<std::string>& fails, Totals& totals) {
  const FuzzCase& c = buf.c;
  const support::CompareStats st = buf.compare(buf.c_ours, buf.c_ref);
  const double bound = fuzz_bound(c.dtype, c.shape.k);
  if (st.nonfinite_x > 0)
    fails.push_back(format("%lld outputs are NaN/Inf (unwritten?)", static_cast<long long>(st.nonfinite_x)));
  if (st.nonfinite_ref > 0) fails.push_back("the reference produced non-finite outputs");
  // A zero reference (alpha = 0, beta = 0, or K = 0 with beta = 0) must be matched exactly.
  // (Compared by value: 0 * a negative sum is -0, which equals +0.)
  const bool exact = (c.alpha == 0.0f || c.shape.k == 0) && c.beta == 0.0f;
  if (exact ? st.max_abs != 0.0 : !(st.norm_rel <= bound)) {
    fails.push_back(format("relative error %.3e above the bound %.3e (max |diff| %.3e, %lld of %lld identical)",
                           st.norm_rel, bound, st.max_abs, static_cast<long long>(st.identical),
                           static_cast<long long>(st.count)));
    if (!exact)
      fails.push_back(locate_errors(c.dtype, buf.c_ours, buf.c_ref, c.off_c, buf.sc.ld, c.shape.m, c.shape.n, bound));
  }
  if (!exact) totals.worst_ratio = std::max(totals.worst_ratio, st.norm_rel / bound);
}

// Every element against the float64 reference and its element-wise bound
// (C0 is read only when beta != 0: it is NaN poison otherwise): strictly for
// tcgemm's own code, counted (and held to the bound with alpha*AB rounded
// twice) for the cuBLAS fallback.
void check_elementwise_bound(CaseBuffers& buf, const Plan& ours, std::vector<std::string>& fails, Totals& totals) {
  const FuzzCase& c = buf.c;
  const support::ElementwiseStats ew =
      support::check_elementwise(buf.args(buf.c_ours), c.beta != 0.0f ? buf.c_init.data() + c.off_c : nullptr);
  const long long elements = static_cast<long long>(ew.count);
  if (ours.backend != Backend::cublas) {
    ++totals.own_checked;
    totals.own_worst = std::max(totals.own_worst, ew.worst);
    totals.own_cases_beyond += ew.beyond > 0;
    totals.own_elements_beyond += ew.beyond;
    if (ew.beyond > 0)
      fails.push_back(format("%lld of %lld elements beyond the element-wise bound (worst |c - ref| / bound %.3g); "
                             "first %s",
                             static_cast<long long>(ew.beyond), elements, ew.worst, ew.first.str().c_str()));
    return;
  }
  ++totals.fallback_checked;
  totals.fallback_worst = std::max(totals.fallback_worst, ew.worst);
  totals.fallback_worst_rounded_twice = std::max(totals.fallback_worst_rounded_twice, ew.worst_rounded_twice);
  if (ew.beyond > 0) {
    ++totals.fallback_cases_beyond;
    totals.fallback_elements_beyond += ew.beyond;
    if (totals.fallback_repros.size() < kMaxFallbackRepros)
      totals.fallback_repros.push_back(
          format("%s: %lld of %lld elements beyond, worst %.3g, first %s; repro: tcgemm check --fuzz 1 --seed %llu",
                 describe(c).c_str(), static_cast<long long>(ew.beyond), elements, ew.worst, ew.first.str().c_str(),
                 static_cast<unsigned long long>(c.seed)));
  }
  if (ew.beyond_rounded_twice > 0)
    fails.push_back(format("cuBLAS fallback: %lld of %lld elements beyond the element-wise bound even with "
                           "alpha*AB rounded to %s first (worst |c - ref| / that bound %.3g); first %s",
                           static_cast<long long>(ew.beyond_rounded_twice), elements, to_string(c.dtype),
                           ew.worst_rounded_twice, ew.first_rounded_twice.str().c_str()));
}

// Bit identity with cuBLAS: counted by K (see Totals), not required: which
// kernel cuBLAS runs, and whether it sums K in the same order, is not
// visible from outside.
void count_cublas_identity(const CaseBuffers& buf, const Plan& ours, const Plan& cublas, Backend family, int num_sms,
                           Totals& totals) {
  const FuzzCase& c = buf.c;
  const int64_t tiles = ((c.shape.m + 127) / 128) * ((c.shape.n + 127) / 128);
  if (cublas.status != Status::ok || ours.backend != family || c.alpha != 1.0f || c.beta != 0.0f || tiles < num_sms)
    return;
  const support::CompareStats vc = buf.compare(buf.c_ours, buf.c_cublas);
  ++totals.identity_cases[k_bucket(c.shape.k)];
  if (vc.identical == vc.count) ++totals.identity_held[k_bucket(c.shape.k)];
}

// Every built-in configuration of the family gives the automatic choice's
// bits, in the whole C buffer (cuBLAS's output buffer is reused for them).
void check_all_configs(CaseBuffers& buf, Backend family, std::vector<std::string>& fails) {
  const FuzzCase& c = buf.c;
  const std::vector<uint16_t> reference_bits = support::download(buf.c_ours.data(), buf.c_elems, buf.stream);
  const std::vector<std::string> differ = check_builtin_configs(
      family, buf.args(buf.c_cublas), [&] { buf.reset(buf.c_cublas); },
      [&](const support::KernelVariant& v, const Plan& p) -> std::vector<std::string> {
        const std::vector<uint16_t> h = support::download(buf.c_cublas.data(), buf.c_elems, buf.stream);
        int64_t differ = 0;
        for (size_t i = 0; i < buf.c_elems; ++i) differ += h[i] != reference_bits[i];
        if (differ == 0) return {};
        return {format("%s (%s) differs from the automatic choice in %lld elements", v.label.c_str(),
                       short_kernel(p).c_str(), static_cast<long long>(differ)),
                "  " + locate_errors(c.dtype, buf.c_cublas, buf.c_ref, c.off_c, buf.sc.ld, c.shape.m, c.shape.n,
                                     fuzz_bound(c.dtype, c.shape.k))};
      });
  fails.insert(fails.end(), differ.begin(), differ.end());
}

// Nothing outside C changed: the whole buffer against its initial state,
// except the M x N elements themselves.
void check_outside_c(const CaseBuffers& buf, std::vector<std::string>& fails) {
  const FuzzCase& c = buf.c;
  const std::vector<uint16_t> before = support::download(buf.c_init.data(), buf.c_elems, buf.stream),
                              after = support::download(buf.c_ours.data(), buf.c_elems, buf.stream);
  int64_t outside = 0;
  for (size_t i = 0; i < buf.c_elems; ++i) {
    const int64_t rel = static_cast<int64_t>(i) - c.off_c;
    const bool inside = rel >= 0 && rel / buf.sc.ld < c.shape.m && rel % buf.sc.ld < c.shape.n;
    if (!inside && before[i] != after[i]) ++outside;
  }
  if (outside > 0) fails.push_back(format("%lld elements outside C were written", static_cast<long long>(outside)));
}

// Runs one case; returns its failures (empty: passed).
std::vector<std::string> run_fuzz_case(const FuzzCase& c, Backend family, int num_sms, bool all_configs,
                                       cudaStream_t stream, Totals& totals) {
  CaseBuffers buf(c, stream);
  const bool fused = c.fused.any();
  const Plan ours = gemm(buf.args(buf.c_ours));
  const Plan ref = reference_gemm(buf.args(buf.c_ref));
  // (cuBLAS computes no fused epilogue: nothing to compare with then.)
  Plan cublas;
  if (fused)
    cublas.status = Status::unsupported;
  else
    cublas = gemm(buf.args(buf.c_cublas), Options{Prefer::cublas_only, 0});
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<std::string> fails;
  // A fused call with something to multiply (K and alpha not 0) that no
  // kernel can take is refused (the fallback cannot fuse it), and C keeps
  // its initial state.
  const bool refusal_expected = fused && c.shape.m > 0 && c.shape.n > 0 && c.shape.k > 0 && c.alpha != 0.0f &&
                                !kernel_takes(buf, family);
  if (refusal_expected) {
    ++totals.fused_refused;
    if (ours.status != Status::unsupported)
      fails.push_back(format("a fused call no kernel can take was not refused (%s, %s)", to_string(ours.status),
                             ours.reason.c_str()));
    const std::vector<uint16_t> before = support::download(buf.c_init.data(), buf.c_elems, buf.stream),
                                after = support::download(buf.c_ours.data(), buf.c_elems, buf.stream);
    if (before != after) fails.push_back("the refused call wrote C");
    return fails;
  }
  if (ours.status != Status::ok) fails.push_back("tcgemm::gemm failed: " + ours.reason);
  if (ref.status != Status::ok) fails.push_back("reference_gemm failed: " + ref.reason);
  if (!fails.empty()) return fails;

  totals.fused += fused;
  check_backend(buf, ours, family, fails, totals);
  if (c.shape.m > 0 && c.shape.n > 0) {
    // (Fused cases: the element-wise bound of the fused epilogue judges them;
    // the normwise bound is the plain GEMM's.)
    if (!fused) check_normwise(buf, fails, totals);
    check_elementwise_bound(buf, ours, fails, totals);
    if (!fused) count_cublas_identity(buf, ours, cublas, family, num_sms, totals);
    if (all_configs && ours.backend == family) check_all_configs(buf, family, fails);
  }
  check_outside_c(buf, fails);
  return fails;
}

}  // namespace

int run_fuzz(int64_t cases, uint64_t seed, int device, bool all_configs, const std::string& one_case) {
  std::optional<FuzzCase> given;
  if (!one_case.empty()) {
    std::string why;
    given = parse_case(one_case, seed, &why);
    if (!given && !why.empty()) {
      std::fprintf(stderr, "tcgemm check: --case '%s': %s\n", one_case.c_str(), why.c_str());
      return kExitUsage;
    }
    if (!given) {
      std::fprintf(stderr,
                   "tcgemm check: --case wants \"m=M n=N k=K [f16|bf16] [NN|NT|TN|TT] [lda=..] [ldb=..] [ldc=..] "
                   "[offsets=a,b,c] [alpha=..] [beta=..] [activation=..] [bias=none|same|f32]\" (each field once; "
                   "defaults f16 NN, packed rows, no offsets, alpha 1, beta 0), not '%s'\n",
                   one_case.c_str());
      return kExitUsage;
    }
    cases = 1;
  }
  if (!select_device(device)) return kExitUsage;
  const Backend family = support::device_family();
  int num_sms = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device));
  std::printf("tcgemm check --fuzz %lld --seed %llu: %s kernel family, %d SMs\n", static_cast<long long>(cases),
              static_cast<unsigned long long>(seed), to_string(family), num_sms);
  std::fflush(stdout);
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Totals totals;
  const auto start = std::chrono::steady_clock::now();
  // On a terminal a progress line; elsewhere a line every 1000 cases.
  Progress progress("fuzz", cases);
  for (int64_t i = 0; i < cases; ++i) {
    const FuzzCase c = given ? *given : draw_case(seed + static_cast<uint64_t>(i));
    const std::vector<std::string> fails = run_fuzz_case(c, family, num_sms, all_configs, stream, totals);
    ++totals.cases;
    if (!fails.empty()) {
      progress.interrupt();
      ++totals.failed;
      std::printf("FAIL case %lld: %s\n", static_cast<long long>(i), describe(c).c_str());
      for (const std::string& f : fails) std::printf("    %s\n", f.c_str());
      if (given)
        std::printf("    repro: tcgemm check --case \"%s\" --seed %llu\n", one_case.c_str(),
                    static_cast<unsigned long long>(c.seed));
      else
        std::printf("    repro: tcgemm check --fuzz 1 --seed %llu   (or --case \"<the case above>\" --seed %llu)\n",
                    static_cast<unsigned long long>(c.seed), static_cast<unsigned long long>(c.seed));
    }
    progress.advance(1, format("%lld failed", static_cast<long long>(totals.failed)));
    if (!progress.shown() && ((i + 1) % 1000 == 0 || i + 1 == cases)) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%lld cases, %lld failed (%.0f s)\n", static_cast<long long>(i + 1),
                  static_cast<long long>(totals.failed), secs);
    }
    std::fflush(stdout);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  std::printf("fuzz: %lld cases, %lld failed; backends: %s %lld, cublas (fallback) %lld, none %lld; "
              "worst normwise error / bound %.3f\n",
              static_cast<long long>(totals.cases), static_cast<long long>(totals.failed), to_string(family),
              static_cast<long long>(totals.own), static_cast<long long>(totals.fallback),
              static_cast<long long>(totals.none), totals.worst_ratio);
  std::printf("fused epilogue: %lld cases run, %lld refused as documented (no kernel could take them)\n",
              static_cast<long long>(totals.fused), static_cast<long long>(totals.fused_refused));
  std::printf("element-wise bound, tcgemm (%s kernels, K = 0 scale): %lld cases, %lld with elements beyond it "
              "(%lld elements; each such case fails), worst |c - ref| / bound %.3f\n",
              to_string(family), static_cast<long long>(totals.own_checked),
              static_cast<long long>(totals.own_cases_beyond), static_cast<long long>(totals.own_elements_beyond),
              totals.own_worst);
  std::printf("element-wise bound, cuBLAS fallback: %lld cases, %lld with elements beyond it (%lld elements; "
              "cuBLAS's numerics, not failures), worst |c - ref| / bound %.3f; with alpha*AB rounded twice allowed: "
              "worst %.3f (beyond it fails)\n",
              static_cast<long long>(totals.fallback_checked), static_cast<long long>(totals.fallback_cases_beyond),
              static_cast<long long>(totals.fallback_elements_beyond), totals.fallback_worst,
              totals.fallback_worst_rounded_twice);
  for (const std::string& r : totals.fallback_repros) std::printf("fallback beyond the bound: %s\n", r.c_str());
  std::printf("bit-identical to cuBLAS (alpha 1, beta 0, >= 1 tile per SM), by K:");
  const char* names[kNumKBuckets] = {"<64", "64-255", "256-1023", "1024-4095", ">=4096"};
  for (int b = 0; b < kNumKBuckets; ++b)
    std::printf(" %s %lld/%lld", names[b], static_cast<long long>(totals.identity_held[b]),
                static_cast<long long>(totals.identity_cases[b]));
  std::printf("\n");
  return totals.failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
