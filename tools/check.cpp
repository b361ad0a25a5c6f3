// `tcgemm check`: a correctness sweep that cannot pass by accident.
//
// Per case: A and B get fresh random values (uniform(-1,1), seeds printed),
// C is poisoned with NaN (or, for beta != 0, filled with random values shared
// by every backend), then
//   ours  = tcgemm::gemm (Prefer::automatic)
//   ref   = tcgemm::reference_gemm (fp32, one product at a time, K in order)
//   cuBLAS = tcgemm::gemm (Prefer::cublas_only)
// Pass: no non-finite output, ||ours - ref|| / ||ref|| under the dtype's
// tolerance, every element within the element-wise bound against a float64
// reference (support/error_bound.hpp; where the call fell back to cuBLAS,
// the bound that allows cuBLAS's extra rounding of alpha*AB) and, where
// tcgemm's kernel ran, the same bits in every built-in configuration (the
// library promises results independent of the tile config).
// Bit-identity to cuBLAS is reported, not required: cuBLAS may split K.
// --batch N runs every case as a strided batch of N problems (each its own
// A, B and C, 16-byte aligned strides: tcgemm's kernel takes them in one
// launch) against the batched reference and cuBLAS's strided batched GEMM,
// every problem held to the same tests.
// --groups G runs every case as an M-grouped call (GemmArgs::groups): A's
// and C's M rows in G groups of random sizes (some empty, and in half the
// cases the last group ending before row M), each group its own B; held to
// the grouped reference, each group's rows to the element-wise bound as a
// plain call on those rows, every row past the last end left as it was, and
// the same bits in every configuration built for M-grouped calls. (No cuBLAS
// comparison: cuBLAS has no M-grouped GEMM.)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "arg_parser.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "suites.hpp"
#include "support/compare.hpp"
#include "support/elementwise.hpp"
#include "support/fill.hpp"
#include "support/half_bits.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

constexpr uint64_t kDefaultSeed = 20240;
const std::vector<Layout> kAllLayouts = parse_layouts("all");

struct CaseOutcome {
  bool passed = true;
  Backend backend = Backend::none;
  std::vector<std::string> failures;  // one sentence each
  std::string why_not_own_kernel;            // the plan's reason when ours fell back
};

// Seeds depend only on the case's place in the full sweep, so a case selected
// with --dtype/--layout sees the same inputs as in the full run.
uint64_t case_seed(uint64_t base, DType dtype, Layout layout, size_t case_index) {
  const size_t layout_index = static_cast<size_t>(layout.a) * 2 + static_cast<size_t>(layout.b);
  const size_t serial = (static_cast<size_t>(dtype) * 4 + layout_index) * check_cases().size() + case_index;
  return base + 3 * static_cast<uint64_t>(serial);
}

std::string percent(double fraction) { return format("%.2f%%", 100.0 * fraction); }

// support::check_elementwise over every problem of the batched call `g`
// (each as a plain call on its matrices): counts summed, the worst ratios,
// the first violation of the first problem that has one.
support::ElementwiseStats elementwise_batch(const GemmArgs& g, const uint16_t* c0) {
  support::ElementwiseStats all;
  for (int64_t i = 0; i < g.batch; ++i) {
    GemmArgs one = g;
    one.a = static_cast<const uint16_t*>(g.a) + i * g.stride_a;
    one.b = static_cast<const uint16_t*>(g.b) + i * g.stride_b;
    one.c = static_cast<uint16_t*>(g.c) + i * g.stride_c;
    one.batch = 1;
    all.merge(support::check_elementwise(one, c0 ? c0 + i * g.stride_c : nullptr));
  }
  return all;
}

// The cumulative row ends of an M-grouped case: M rows (or, for odd seeds,
// the first 7/8 of them: the rest in no group) cut at random places into
// `groups` groups, group 1 empty when there are 4 or more.
std::vector<int32_t> random_group_ends(int64_t m, int64_t groups, uint64_t seed) {
  const int64_t in_groups = seed % 2 == 1 ? m - m / 8 : m;
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ends(static_cast<size_t>(groups));
  for (int32_t& e : ends) e = static_cast<int32_t>(std::uniform_int_distribution<int64_t>(0, in_groups)(rng));
  std::sort(ends.begin(), ends.end());
  ends.back() = static_cast<int32_t>(in_groups);
  if (groups >= 4) ends[1] = ends[0];
  return ends;
}

// support::check_elementwise over every group of the M-grouped call `g`
// whose ends are `ends` (each group as a plain call on its rows and its B).
support::ElementwiseStats elementwise_groups(const GemmArgs& g, const std::vector<int32_t>& ends, const uint16_t* c0) {
  support::ElementwiseStats all;
  int64_t start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    GemmArgs one = g;
    one.groups = 0;
    one.group_ends = nullptr;
    one.stride_b = 0;
    one.m = ends[i] - start;
    one.a = static_cast<const uint16_t*>(g.a) + start * g.lda;
    one.b = static_cast<const uint16_t*>(g.b) + static_cast<int64_t>(i) * g.stride_b;
    one.c = static_cast<uint16_t*>(g.c) + start * g.ldc;
    if (one.m > 0) all.merge(support::check_elementwise(one, c0 ? c0 + start * g.ldc : nullptr));
    start = ends[i];
  }
  return all;
}

std::string join_ints(const std::vector<int32_t>& v) {
  std::string out;
  for (const int32_t x : v) {
    if (!out.empty()) out += ',';
    out += std::to_string(x);
  }
  return out;
}

CaseOutcome run_case(DType dtype, Layout layout, const CheckCase& cc, uint64_t seed, cudaStream_t stream,
                     const FusedEpilogue& fused, int64_t batch, int64_t groups) {
  CaseOutcome out;
  const Shape& s = cc.shape;
  const Operands ops = operands_for(s, layout, cc.pad);
  // (An M-grouped call: `groups` B matrices, one A and one C.)
  const BatchLayout bl(groups > 0 ? groups : batch, ops);
  const BatchLayout one_c(1, ops);
  const BatchLayout& c_layout = groups > 0 ? one_c : bl;
  const size_t a_total = groups > 0 ? static_cast<size_t>(ops.a_elems) : bl.total(ops.a_elems, bl.stride_a),
               b_total = bl.total(ops.b_elems, bl.stride_b), c_total = c_layout.total(ops.c_elems, bl.stride_c);
  const std::vector<int32_t> ends = groups > 0 ? random_group_ends(s.m, groups, seed + 4) : std::vector<int32_t>{};
  support::DeviceBuffer<int32_t> ends_dev(ends.size());
  if (!ends.empty())
    CHECK_CUDA(cudaMemcpyAsync(ends_dev.data(), ends.data(), ends.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                               stream));
  // The rows the groups cover; the rest of C must be left as it was.
  const int64_t rows_written = ends.empty() ? s.m : ends.back();
  const Shape s_written{rows_written, s.n, s.k};
  const BiasVector bias(fused, dtype, s.n, seed + 3, stream);
  ElementBuffer a(a_total), b(b_total), c_init(cc.beta != 0.0f ? c_total : 0);
  ElementBuffer c_ours(c_total), c_ref(c_total), c_cublas(c_total);

  const support::Distribution inputs = support::uniform(-1.0f, 1.0f);
  support::fill_random(dtype, a.data(), static_cast<int64_t>(a_total), inputs, seed, stream);
  support::fill_random(dtype, b.data(), static_cast<int64_t>(b_total), inputs, seed + 1, stream);
  if (cc.beta != 0.0f)
    support::fill_random(dtype, c_init.data(), static_cast<int64_t>(c_total), inputs, seed + 2, stream);
  // A generator bug that produced zeros would make every backend agree.
  for (const auto& [name, buf, count] : {std::tuple{"A", &a, static_cast<int64_t>(a_total)},
                                         std::tuple{"B", &b, static_cast<int64_t>(b_total)}}) {
    const support::ValueStats st = support::value_stats(dtype, buf->data(), count, stream);
    if (!st.usable_input())
      out.failures.push_back(format("input %s is not a usable random matrix (%lld of %lld non-zero, %lld non-finite)",
                                    name, static_cast<long long>(st.nonzero), static_cast<long long>(st.count),
                                    static_cast<long long>(st.nonfinite)));
  }
  // Every output starts from the same state: NaN when C must not be read.
  auto prepare = [&](ElementBuffer& c) {
    if (cc.beta != 0.0f)
      CHECK_CUDA(cudaMemcpyAsync(c.data(), c_init.data(), c.bytes(), cudaMemcpyDeviceToDevice, stream));
    else
      support::fill_bits(c.data(), c.size(), support::kNanAllOnes, stream);
  };
  auto args_for = [&](ElementBuffer& c) {
    GemmArgs g = make_args(dtype, layout, s, ops, a.data(), b.data(), c.data(), cc.alpha, cc.beta, stream);
    bias.apply(g);
    if (groups > 0) {
      g.groups = groups;
      g.group_ends = ends_dev.data();
      g.stride_b = bl.stride_b;
    } else {
      bl.apply(g);
    }
    return g;
  };

  // All three run on one stream; one synchronize then surfaces any fault
  // before the outputs are read.
  prepare(c_ours);
  prepare(c_ref);
  prepare(c_cublas);
  const Plan ours = gemm(args_for(c_ours));
  const Plan ref = reference_gemm(args_for(c_ref));
  // (cuBLAS has no fused epilogue and no M-grouped GEMM: with either, there
  // is nothing to compare with.)
  Plan cublas;
  if (fused.any() || groups > 0)
    cublas.status = Status::unsupported;
  else
    cublas = gemm(args_for(c_cublas), Options{Prefer::cublas_only, 0});
  CHECK_CUDA(cudaStreamSynchronize(stream));
  out.backend = ours.backend;
  const bool own_kernel = ours.backend == Backend::sm90 || ours.backend == Backend::sm100;
  if (!own_kernel) out.why_not_own_kernel = ours.reason;

  std::string kernel = ours.status == Status::ok ? short_kernel(ours) : "rejected";
  std::string err = "-", elem = "-", cublas_err = "-", same_as_cublas = "-", tiles = "-";
  // A fused or M-grouped call whose operands no kernel takes is refused
  // (cuBLAS can compute neither): the documented answer, not a failure.
  const bool refused_as_documented =
      ours.status == Status::unsupported &&
      ((fused.any() && ours.reason.find("cuBLAS cannot fuse") != std::string::npos) ||
       (groups > 0 && ours.reason.find("no cuBLAS call computes an M-grouped GEMM") != std::string::npos));
  if (refused_as_documented) kernel = fused.any() ? "refused (no fused fallback)" : "refused (no grouped fallback)";
  if (ours.status != Status::ok && !refused_as_documented)
    out.failures.push_back(format("tcgemm::gemm failed (%s): %s", to_string(ours.status), ours.reason.c_str()));
  if (ref.status != Status::ok)
    out.failures.push_back(format("reference_gemm failed (%s): %s", to_string(ref.status), ref.reason.c_str()));

  if (ours.status == Status::ok && ref.status == Status::ok) {
    const support::CompareStats vs_ref =
        compare_batch(dtype, c_ours.data(), c_ref.data(), ops, s_written, c_layout, stream);
    err = format("%.2e", vs_ref.norm_rel);
    if (vs_ref.nonfinite_x > 0)
      out.failures.push_back(format("%lld of %lld outputs are NaN/Inf (C was poisoned with NaN: unwritten output?)",
                                    static_cast<long long>(vs_ref.nonfinite_x), static_cast<long long>(vs_ref.count)));
    if (vs_ref.nonfinite_ref > 0)
      out.failures.push_back(format("the reference produced %lld non-finite outputs",
                                    static_cast<long long>(vs_ref.nonfinite_ref)));
    if (!(vs_ref.norm_rel < support::normwise_tolerance(dtype)))
      out.failures.push_back(format("relative error %.3e is above the %s tolerance %.0e (max |diff| %.3e)",
                                    vs_ref.norm_rel, to_string(dtype), support::normwise_tolerance(dtype), vs_ref.max_abs));
    // Rows in no group: as prepared (NaN, or C's values for beta != 0), in
    // ours as in the reference, which does not write them either.
    if (rows_written < s.m) {
      const support::CompareStats rest =
          support::compare(dtype, c_ours.data() + rows_written * ops.ldc, ops.ldc, c_ref.data() + rows_written * ops.ldc,
                           ops.ldc, s.m - rows_written, s.n, stream);
      if (rest.identical != rest.count)
        out.failures.push_back(format("%lld of the %lld elements of the rows past the last group end were written",
                                      static_cast<long long>(rest.count - rest.identical),
                                      static_cast<long long>(rest.count)));
    }
  }
  if (ours.status == Status::ok) {
    // Every element against the float64 reference: tcgemm's own code
    // strictly; cuBLAS's numerics (a fallback) may round alpha*AB once more.
    const uint16_t* c0 = cc.beta != 0.0f ? c_init.data() : nullptr;
    const support::ElementwiseStats ew =
        groups > 0 ? elementwise_groups(args_for(c_ours), ends, c0) : elementwise_batch(args_for(c_ours), c0);
    elem = format("%.3f", ew.worst);
    if (ours.backend != Backend::cublas && ew.beyond > 0)
      out.failures.push_back(format("%lld of %lld elements beyond the element-wise bound (worst |c - ref| / bound "
                                    "%.3g); first %s",
                                    static_cast<long long>(ew.beyond), static_cast<long long>(ew.count), ew.worst,
                                    ew.first.str().c_str()));
    if (ours.backend == Backend::cublas && ew.beyond_rounded_twice > 0)
      out.failures.push_back(format("cuBLAS fallback: %lld of %lld elements beyond the element-wise bound even with "
                                    "alpha*AB rounded to %s first; first %s",
                                    static_cast<long long>(ew.beyond_rounded_twice), static_cast<long long>(ew.count),
                                    to_string(dtype), ew.first_rounded_twice.str().c_str()));
  }
  if (cublas.status == Status::ok) {
    // cuBLAS's own error puts ours in scale: both round the same fp32 sums.
    if (ref.status == Status::ok)
      cublas_err = format("%.2e", compare_batch(dtype, c_cublas.data(), c_ref.data(), ops, s, bl, stream).norm_rel);
    if (ours.status == Status::ok) {
      const support::CompareStats vs_cublas = compare_batch(dtype, c_ours.data(), c_cublas.data(), ops, s, bl, stream);
      same_as_cublas = percent(vs_cublas.identical_fraction());
    }
  }

  // Tile invariance: tcgemm's kernel in every built-in configuration of its
  // family must give ours' bits (the automatic choice ran the family's
  // kernel, so every configuration of it must run too).
  if (ours.status == Status::ok && own_kernel) {
    ElementBuffer c_tile(c_total);
    const std::vector<std::string> differ = check_builtin_configs(
        ours.backend, args_for(c_tile), [&] { prepare(c_tile); },
        [&](const support::KernelVariant& v, const Plan& p) -> std::vector<std::string> {
          const support::CompareStats st = compare_batch(dtype, c_tile.data(), c_ours.data(), ops, s, c_layout, stream);
          if (st.identical == st.count) return {};
          return {format("%s (%s) differs from the automatic choice in %lld of %lld elements", v.label.c_str(),
                         short_kernel(p).c_str(), static_cast<long long>(st.count - st.identical),
                         static_cast<long long>(st.count))};
        });
    out.failures.insert(out.failures.end(), differ.begin(), differ.end());
    tiles.assign(differ.empty() ? "same" : "DIFF");
  }

  out.passed = out.failures.empty();
  std::printf("%-22s %9s %9s %10s %8s %-5s %s\n", kernel.c_str(), err.c_str(), elem.c_str(), cublas_err.c_str(),
              same_as_cublas.c_str(), tiles.c_str(), out.passed ? "PASS" : "FAIL");
  if (!out.passed) {
    for (const std::string& f : out.failures) std::printf("    %s\n", f.c_str());
    std::printf("    case: m=%lld n=%lld k=%lld dtype=%s layout=%s lda=%lld ldb=%lld ldc=%lld alpha=%g beta=%g "
                "seeds A=%llu B=%llu C=%llu%s\n",
                static_cast<long long>(s.m), static_cast<long long>(s.n), static_cast<long long>(s.k),
                to_string(dtype), layout.str().c_str(), static_cast<long long>(ops.lda),
                static_cast<long long>(ops.ldb), static_cast<long long>(ops.ldc), cc.alpha, cc.beta,
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed + 1),
                static_cast<unsigned long long>(seed + 2),
                groups > 0    ? format(" groups=%lld stride_b=%lld ends=%s", static_cast<long long>(groups),
                                       static_cast<long long>(bl.stride_b), join_ints(ends).c_str())
                                    .c_str()
                : bl.count == 1 ? ""
                                : format(" batch=%lld stride_a=%lld stride_b=%lld stride_c=%lld",
                                         static_cast<long long>(bl.count), static_cast<long long>(bl.stride_a),
                                         static_cast<long long>(bl.stride_b), static_cast<long long>(bl.stride_c))
                                      .c_str());
  }
  std::fflush(stdout);
  return out;
}

}  // namespace

void add_check_options(ArgParser& parser) {
  parser.add_option("dtype", "f16|bf16|both", "element types to check (default both)");
  parser.add_option("layout", "NN|NT|TN|TT|all", "layouts, op_a then op_b, or a comma-separated list (default all)");
  parser.add_flag("quick", "only the cases marked * below (a few seconds)");
  parser.add_option("seed", "N", "base seed of the random inputs (default " + std::to_string(kDefaultSeed) + ")");
  parser.add_option("device", "N", "CUDA device index (default 0)");
  parser.add_option("fuzz", "N",
                    "instead of the sweep: N random cases (shapes skewed to edges, padded and misaligned "
                    "operands, alpha/beta); case i uses seed S+i, so --fuzz 1 --seed S+i replays it");
  parser.add_option("soak", "N",
                    "instead of the sweep: N launches over --streams host threads and streams at once, "
                    "spot-checked bit for bit, memory growth measured");
  parser.add_option("streams", "S", "with --soak: concurrent host threads, one stream each (default 4)");
  parser.add_option("case", "\"m=.. n=.. k=.. f16 NT ...\"",
                    "one fuzz case as a failure prints it (edit it freely); inputs from --seed");
  parser.add_flag("all-configs", "with --fuzz or --case: also run every built-in configuration on each case (same bits)");
  parser.add_option("activation", "none|relu|gelu|gelu_tanh|silu",
                    "run the sweep with the fused epilogue's activation (held to its own element-wise bound; no "
                    "cuBLAS comparison; calls no kernel takes are refused, as documented)");
  parser.add_option("bias", "none|same|f32", "with the sweep: a fused bias of the output's type or fp32");
  parser.add_option("batch", "N",
                    "run the sweep with every case a strided batch of N problems (one launch; each problem "
                    "its own A, B, C; compared with the batched reference and cuBLAS's strided batched GEMM)");
  parser.add_option("groups", "G",
                    "run the sweep with every case an M-grouped call: M rows in G groups of random sizes (1 to 256; "
                    "some empty, some rows in none), a B per group; layouts with A stored K-major (NN, NT) only; "
                    "compared with the grouped reference (no cuBLAS)");
  std::string epilog =
      "Each case fills A and B with uniform(-1,1) values, poisons C with NaN, and runs tcgemm::gemm, the\n"
      "reference GEMM (fp32 accumulation) and cuBLAS. A case passes when no output is NaN/Inf, the\n"
      "normwise relative error ||C - ref|| / ||ref|| is below 2e-3 (f16) or 1e-2 (bf16), every element\n"
      "is within the element-wise bound against a float64 reference ref64:\n"
      "  |c - ref64| <= (1 + u) gamma_{K+1} (|alpha| sum|a||b| + |beta||c0|) + u |ref64| + eta\n"
      "(gamma_n = n 2^-24 / (1 - n 2^-24), u = 2^-11 f16, 2^-8 bf16, eta = half the smallest subnormal;\n"
      "a call that fell back to cuBLAS may round alpha*AB once more), and, where the family's kernel ran,\n"
      "every built-in configuration (kTileConfigs on sm_90, kSm100TileConfigs on sm_100) gives the same bits.\n\n"
      "columns: kernel (backend and tile), rel err (normwise, vs reference), elem/bnd (max over the elements\n"
      "of |c - ref64| / element-wise bound: at most 1 where tcgemm's code ran), cuBLAS err (cuBLAS's own\n"
      "normwise error, for scale), =cuBLAS (elements bit-identical to cuBLAS), tiles (same bits in every\n"
      "built-in configuration)\n\n"
      "cases (MxNxK, * = --quick):\n";
  for (const CheckCase& cc : check_cases())
    epilog += format("  %c %-16s %s\n", cc.quick ? '*' : ' ', cc.shape.str().c_str(), cc.why);
  parser.add_epilog(epilog);
}

int run_check(const ArgParser& parser) {
  // One run at a time, and each option only where it applies (an option the
  // run would ignore is refused, not dropped in silence).
  const int modes = parser.has("soak") + parser.has("fuzz") + parser.has("case");
  if (modes > 1) return usage_error(parser, "--soak, --fuzz and --case are separate runs: give one of them");
  if (modes > 0 && (parser.has("dtype") || parser.has("layout") || parser.has("quick")))
    return usage_error(parser, "--dtype, --layout and --quick choose the sweep's cases: --fuzz draws its own, "
                               "--case names one, --soak runs its own");
  if (parser.has("streams") && !parser.has("soak")) return usage_error(parser, "--streams applies to --soak");
  if (parser.has("seed") && parser.has("soak"))
    return usage_error(parser, "--seed applies to the sweep, --fuzz and --case: --soak draws nothing at random");
  if (parser.has("all-configs") && !parser.has("fuzz") && !parser.has("case"))
    return usage_error(parser, "--all-configs applies to --fuzz and --case");
  if (parser.has("case") && parser.get("case", "").empty())
    return usage_error(parser, "--case wants a case, e.g. \"m=64 n=64 k=64 f16 NT\"");
  const std::vector<DType> dtypes = parse_dtypes(parser.get("dtype", "both"));
  if (dtypes.empty()) return usage_error(parser, "--dtype must be f16, bf16 or both");
  const std::vector<Layout> layouts = parse_layouts(parser.get("layout", "all"));
  if (layouts.empty())
    return usage_error(parser, "--layout must be NN, NT, TN, TT, a comma-separated list of distinct ones, or all");
  const auto seed = parse_int(parser.get("seed", std::to_string(kDefaultSeed)), 0, int64_t{1} << 48);
  if (!seed) return usage_error(parser, "--seed wants an integer from 0 to 2^48");
  const auto device = parse_int(parser.get("device", "0"), 0, 1023);
  if (!device) return usage_error(parser, "--device wants a device index from 0 to 1023");
  const bool quick = parser.has("quick");
  FusedEpilogue fused;
  if (std::string why = parse_fused_epilogue(parser, &fused); !why.empty()) return usage_error(parser, why);
  if ((parser.has("activation") || parser.has("bias")) &&
      (parser.has("soak") || parser.has("fuzz") || parser.has("case")))
    return usage_error(parser, "--activation and --bias apply to the sweep (not --fuzz, --case or --soak)");
  const auto batch = parse_int(parser.get("batch", "1"), 1, 65536);
  if (!batch) return usage_error(parser, "--batch wants a number of problems from 1 to 65536");
  if (parser.has("batch") && (parser.has("soak") || parser.has("fuzz") || parser.has("case")))
    return usage_error(parser, "--batch applies to the sweep (not --fuzz, --case or --soak)");
  const auto groups =
      parser.has("groups") ? parse_int(parser.get("groups", ""), 1, kMaxGroups) : std::optional<int64_t>{0};
  if (!groups) return usage_error(parser, "--groups wants a number of groups from 1 to " + std::to_string(kMaxGroups));
  std::vector<Layout> run_layouts = layouts;
  if (*groups > 0) {
    if (parser.has("soak") || parser.has("fuzz") || parser.has("case") || parser.has("batch") ||
        parser.has("activation") || parser.has("bias"))
      return usage_error(parser, "--groups applies to the plain sweep (not --fuzz, --case, --soak, --batch or a "
                                 "fused epilogue, which an M-grouped call does not take)");
    // An M-grouped call takes A stored K-major only (op_a = N): the sweep's
    // default runs NN and NT; a layout named with A stored M-major is refused.
    if (parser.has("layout"))
      for (const Layout l : run_layouts)
        if (l.a != Op::N)
          return usage_error(parser, "--groups needs layouts with A stored K-major (NN, NT): --layout names " + l.str());
    std::erase_if(run_layouts, [](Layout l) { return l.a != Op::N; });
  }
  if (parser.has("soak")) {
    const auto launches = parse_int(parser.get("soak", ""), 1, int64_t{1} << 40);
    if (!launches) return usage_error(parser, "--soak wants a positive number of launches");
    const auto streams = parse_int(parser.get("streams", "4"), 1, 64);
    if (!streams) return usage_error(parser, "--streams wants 1 to 64");
    return run_soak(*launches, static_cast<int>(*streams), static_cast<int>(*device));
  }
  if (parser.has("case"))
    return run_fuzz(1, static_cast<uint64_t>(*seed), static_cast<int>(*device), parser.has("all-configs"),
                    parser.get("case", ""));
  if (parser.has("fuzz")) {
    const auto cases = parse_int(parser.get("fuzz", ""), 1, int64_t{1} << 40);
    if (!cases) return usage_error(parser, "--fuzz wants a positive number of cases");
    return run_fuzz(*cases, static_cast<uint64_t>(*seed), static_cast<int>(*device), parser.has("all-configs"), "");
  }
  if (!select_device(static_cast<int>(*device))) return kExitUsage;

  const DeviceInfo info = query_device_info();
  std::printf("tcgemm check on %s (%s, %d SMs), tcgemm %s, cuBLAS %s, seed %llu%s%s%s%s\n", info.name.c_str(),
              info.arch().c_str(), info.sm_count, build_info().version, info.cublas_version().c_str(),
              static_cast<unsigned long long>(*seed), quick ? ", quick" : "",
              fused.any() ? (", fused epilogue: " + fused.str()).c_str() : "",
              *batch > 1 ? format(", batches of %lld", static_cast<long long>(*batch)).c_str() : "",
              *groups > 0 ? format(", M-grouped in %lld groups", static_cast<long long>(*groups)).c_str() : "");
  std::printf("%-4s %-3s %-14s %-10s %-22s %9s %9s %10s %8s %-5s %s\n", "type", "lay", "shape", "alpha,beta", "kernel",
              "rel err", "elem/bnd", "cuBLAS err", "=cuBLAS", "tiles", "result");

  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto start = std::chrono::steady_clock::now();
  int passed = 0, failed = 0;
  std::map<std::string, int> backends;
  std::string why_not_own_kernel;
  const auto& cases = check_cases();
  for (const DType dtype : dtypes) {
    for (const Layout layout : run_layouts) {
      for (size_t i = 0; i < cases.size(); ++i) {
        const CheckCase& cc = cases[i];
        if (quick && !cc.quick) continue;
        // The case is printed before it runs, so a crash names it.
        std::printf("%-4s %-3s %-14s %-10s ", to_string(dtype), layout.str().c_str(), cc.shape.str().c_str(),
                    format("%g,%g", cc.alpha, cc.beta).c_str());
        std::fflush(stdout);
        const CaseOutcome outcome =
            run_case(dtype, layout, cc, case_seed(*seed, dtype, layout, i), stream, fused, *batch, *groups);
        (outcome.passed ? passed : failed) += 1;
        backends[to_string(outcome.backend)] += 1;
        if (!outcome.why_not_own_kernel.empty() && why_not_own_kernel.empty()) why_not_own_kernel = outcome.why_not_own_kernel;
      }
    }
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::string ran;
  for (const auto& [name, count] : backends) ran += format("%s%s %d", ran.empty() ? "" : ", ", name.c_str(), count);
  std::printf("backends: %s\n", ran.c_str());
  // A GPU of a family this build lacks (a 100a-only build on an H200)
  // checked cuBLAS alone: a failure, not a pass (a GPU no family is written
  // for, an A100 say, runs the fallback by design: a note).
  const Backend family = support::device_family();
  const bool family_missing = family != Backend::none && !support::family_built(family);
  if (backends.count(to_string(Backend::sm90)) == 0 && backends.count(to_string(Backend::sm100)) == 0)
    std::printf("%s: no case ran tcgemm's own kernel; e.g. \"%s\"\n", family_missing ? "error" : "note",
                why_not_own_kernel.c_str());
  std::printf("check: %d passed, %d failed (%.1f s)\n", passed, failed, seconds);
  if (family_missing)
    std::printf("check: this build (%s) has no %s kernels for this %s GPU: rebuild with -DTCGEMM_CUDA_ARCHS including "
                "its architecture\n",
                build_info().cuda_archs, to_string(family), info.arch().c_str());
  return failed == 0 && !family_missing ? kExitOk : kExitFailure;
}

}  // namespace tcgemm::cli
