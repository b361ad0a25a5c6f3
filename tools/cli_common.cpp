#include "cli_common.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "arg_parser.hpp"
#include "cuda_check.hpp"
#include "support/fill.hpp"

namespace tcgemm::cli {

std::string Shape::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

std::string Layout::str() const { return std::string(to_string(a)) + to_string(b); }

std::optional<int64_t> parse_int(const std::string& text, int64_t min, int64_t max) {
  // Digits only: no sign, no spaces, no "1e3" or "8k" that strtoll would
  // half-accept. 18 digits cannot overflow int64.
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<Shape> parse_shape(const std::string& text) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (true) {
    const size_t x = text.find_first_of("xX", start);
    const auto dim = parse_int(text.substr(start, x == std::string::npos ? std::string::npos : x - start), 0,
                               (int64_t{1} << 31) - 1);
    if (!dim) return std::nullopt;
    dims.push_back(*dim);
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (dims.size() == 1) return Shape{dims[0], dims[0], dims[0]};
  if (dims.size() == 3) return Shape{dims[0], dims[1], dims[2]};
  return std::nullopt;
}

std::vector<DType> parse_dtypes(const std::string& text) {
  if (text == "f16" || text == "fp16") return {DType::f16};
  if (text == "bf16") return {DType::bf16};
  if (text == "both") return {DType::f16, DType::bf16};
  return {};
}

std::vector<Layout> parse_layouts(const std::string& text) {
  const std::vector<Layout> all = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};
  if (text == "all") return all;
  std::vector<Layout> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string word = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto it = std::find_if(all.begin(), all.end(), [&](const Layout& l) { return l.str() == word; });
    if (it == all.end()) return {};
    // (A layout named twice would run or time the same rows twice: refused.)
    if (std::any_of(out.begin(), out.end(), [&](const Layout& l) { return l.str() == word; })) return {};
    out.push_back(*it);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Operands operands_for(const Shape& s, Layout layout, int64_t pad) {
  // Stored shapes (row-major): A is M x K for op N and K x M for op T, etc.
  const int64_t a_rows = layout.a == Op::N ? s.m : s.k, a_cols = layout.a == Op::N ? s.k : s.m;
  const int64_t b_rows = layout.b == Op::N ? s.k : s.n, b_cols = layout.b == Op::N ? s.n : s.k;
  Operands ops;
  // The API wants ld >= 1 even for an empty row (K = 0).
  ops.lda = std::max<int64_t>(a_cols, 1) + pad;
  ops.ldb = std::max<int64_t>(b_cols, 1) + pad;
  ops.ldc = std::max<int64_t>(s.n, 1) + pad;
  ops.a_elems = a_rows * ops.lda;
  ops.b_elems = b_rows * ops.ldb;
  ops.c_elems = s.m * ops.ldc;
  return ops;
}

GemmArgs make_args(DType dtype, Layout layout, const Shape& shape, const Operands& ops, const void* a,
                   const void* b, void* c, float alpha, float beta, cudaStream_t stream) {
  GemmArgs args;
  args.dtype = dtype;
  args.op_a = layout.a;
  args.op_b = layout.b;
  args.m = shape.m;
  args.n = shape.n;
  args.k = shape.k;
  args.alpha = alpha;
  args.a = a;
  args.lda = ops.lda;
  args.b = b;
  args.ldb = ops.ldb;
  args.beta = beta;
  args.c = c;
  args.ldc = ops.ldc;
  args.stream = stream;
  return args;
}

BatchLayout::BatchLayout(int64_t n, const Operands& ops) : count(n) {
  if (n == 1) return;
  auto up8 = [](int64_t x) { return (x + 7) / 8 * 8; };
  stride_a = up8(ops.a_elems);
  stride_b = up8(ops.b_elems);
  stride_c = up8(ops.c_elems);
}

void BatchLayout::apply(GemmArgs& args) const {
  args.batch = count;
  args.stride_a = stride_a;
  args.stride_b = stride_b;
  args.stride_c = stride_c;
}

support::CompareStats compare_batch(DType dtype, const uint16_t* x, const uint16_t* ref, const Operands& ops,
                                    const Shape& s, const BatchLayout& batch, cudaStream_t stream) {
  support::CompareStats all;
  for (int64_t i = 0; i < batch.count; ++i) {
    all.merge(support::compare(dtype, x + i * batch.stride_c, ops.ldc, ref + i * batch.stride_c, ops.ldc, s.m, s.n,
                               stream));
  }
  return all;
}

const char* FusedEpilogue::bias_name() const { return bias == 1 ? "same" : bias == 2 ? "f32" : "none"; }

std::string FusedEpilogue::str() const {
  return std::string("activation ") + to_string(activation) + ", bias " + bias_name();
}

bool FusedEpilogue::set_activation(const std::string& name) {
  for (const Activation a : {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                             Activation::silu})
    if (name == to_string(a)) {
      activation = a;
      return true;
    }
  return false;
}

bool FusedEpilogue::set_bias(const std::string& name) {
  if (name != "none" && name != "same" && name != "f32") return false;
  bias = name == "same" ? 1 : name == "f32" ? 2 : 0;
  return true;
}

void add_fused_epilogue_options(ArgParser& parser, const std::string& what) {
  parser.add_option("activation", "none|relu|gelu|gelu_tanh|silu", what + ": the fused epilogue's activation");
  parser.add_option("bias", "none|same|f32", what + ": a fused bias vector of the output's type or fp32");
}

std::string parse_fused_epilogue(const ArgParser& parser, FusedEpilogue* out) {
  if (!out->set_activation(parser.get("activation", "none")))
    return "--activation must be none, relu, gelu, gelu_tanh or silu";
  if (!out->set_bias(parser.get("bias", "none"))) return "--bias must be none, same or f32";
  return {};
}

BiasVector::BiasVector(const FusedEpilogue& fused, DType dtype, int64_t n, uint64_t seed, cudaStream_t stream)
    : fused_(fused),
      same_(fused.bias == 1 ? static_cast<size_t>(n) : 0),
      f32_(fused.bias == 2 ? static_cast<size_t>(n) : 0) {
  if (fused.bias == 1) support::fill_random(dtype, same_.data(), n, support::uniform(-1.0f, 1.0f), seed, stream);
  if (fused.bias == 2) {
    std::vector<float> host(static_cast<size_t>(n));
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((i * 37 + seed) % 201) / 100.0f - 1.0f;
    CHECK_CUDA(cudaMemcpyAsync(f32_.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));  // (host is about to go)
  }
}

void BiasVector::apply(GemmArgs& args) const {
  args.activation = fused_.activation;
  args.bias = fused_.bias == 1 ? static_cast<const void*>(same_.data())
              : fused_.bias == 2 ? static_cast<const void*>(f32_.data())
                                 : nullptr;
  args.bias_type = fused_.bias == 2 ? BiasType::f32 : BiasType::same;
}

std::string short_kernel(const Plan& plan) {
  std::string out = to_string(plan.backend);
  if (plan.path != Path::kernel) return out;
  const KernelConfig& k = plan.config;
  out += format(" %dx%dx%d/%dst", k.block_m, k.block_n, k.block_k, k.stages);
  // sm100's 2-CTA pair is its tile, not an option: only sm90's clusters are marked.
  if (plan.backend == Backend::sm90 && k.cluster_m > 1) out += format("/c%d", k.cluster_m);
  if (k.cluster_n > 1) out += format("/cn%d", k.cluster_n);
  if (k.pingpong) out += "/pp";
  if (k.swap_ab) out += "/swap";
  if (k.schedule == Schedule::cluster_launch_control) out += "/clc";
  if (k.schedule == Schedule::counted) out += "/counted";
  if (plan.grid_ctas > 0) out += " g" + std::to_string(plan.grid_ctas);
  return out;
}

bool same_kernel(const Plan& a, const Plan& b) {
  const KernelConfig &x = a.config, &y = b.config;
  return a.backend == b.backend && a.path == b.path && x.block_m == y.block_m && x.block_n == y.block_n &&
         x.block_k == y.block_k && x.stages == y.stages && x.cluster_m == y.cluster_m && x.pingpong == y.pingpong &&
         x.cluster_n == y.cluster_n && x.swap_ab == y.swap_ab &&
         x.schedule == y.schedule;
}

std::vector<std::string> check_builtin_configs(
    Backend family, const GemmArgs& args, const std::function<void()>& reset,
    const std::function<std::vector<std::string>(const support::KernelVariant&, const Plan&)>& compare) {
  std::vector<std::string> lines;
  for (const support::KernelVariant& v :
       args.grouped() ? support::grouped_variants(family) : support::builtin_variants(family)) {
    if (!v.builds(args.op_a, args.op_b)) continue;
    reset();
    const Plan p = gemm(args, v.options);
    CHECK_CUDA(cudaStreamSynchronize(args.stream));
    if (p.status != Status::ok) {
      lines.push_back(v.label + " failed: " + p.reason);
      continue;
    }
    for (std::string& line : compare(v, p)) lines.push_back(std::move(line));
  }
  return lines;
}

int usage_error(const ArgParser& parser, const std::string& message) {
  // The message and where the options are, not the whole usage: bench's runs
  // to the suites' shape lists, and would scroll the one line that matters away.
  std::fprintf(stderr, "tcgemm %s: %s\n(tcgemm %s --help lists the options)\n", parser.command().c_str(),
               message.c_str(), parser.command().c_str());
  return kExitUsage;
}

bool select_device(int device) {
  // Without a usable driver cudaGetDeviceCount fails (cudaErrorNoDevice,
  // cudaErrorInsufficientDriver, ...) rather than returning 0: both mean the
  // same to a user, and both are said in one plain line.
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    std::fprintf(stderr, "tcgemm: no CUDA device is visible (cudaGetDeviceCount: %s: %s)\n", cudaGetErrorName(status),
                 cudaGetErrorString(status));
    return false;
  }
  if (count == 0) {
    std::fprintf(stderr, "tcgemm: no CUDA device is visible (cudaGetDeviceCount returned 0)\n");
    return false;
  }
  if (device < 0 || device >= count) {
    std::fprintf(stderr, "tcgemm: device %d does not exist (%d visible)\n", device, count);
    return false;
  }
  const cudaError_t set = cudaSetDevice(device);
  if (set != cudaSuccess) {
    std::fprintf(stderr, "tcgemm: cannot use device %d (cudaSetDevice: %s: %s)\n", device, cudaGetErrorName(set),
                 cudaGetErrorString(set));
    return false;
  }
  return true;
}

// By value: sorting a copy leaves the caller's samples in launch order.
double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

std::string format(const char* fmt, ...) {
  // Measured first, then written: a long reason (a plan's, an error's) is
  // never cut.
  va_list args;
  va_start(args, fmt);
  va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, fmt, args);
  va_end(args);
  std::string out(length > 0 ? static_cast<size_t>(length) : 0, '\0');
  if (length > 0) std::vsnprintf(out.data(), out.size() + 1, fmt, again);
  va_end(again);
  return out;
}

}  // namespace tcgemm::cli
