// What the subcommands share: shapes and layouts, option parsing into them,
// GemmArgs for a packed (or padded) row-major case, device buffers, device
// selection and the exit codes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "support/compare.hpp"
#include "support/device_buffer.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

class ArgParser;

// 0: success. 1: a check failed or a CUDA call did. 2: bad usage, or no GPU.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// MxNxK: C is M x N, the inner dimension is K (FLOPs = 2*M*N*K).
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  std::string str() const;
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// "NT" means op_a = N, op_b = T.
struct Layout {
  Op a = Op::N, b = Op::N;
  std::string str() const;
};

// "MxNxK" or "S" (a cube S x S x S).
std::optional<Shape> parse_shape(const std::string& text);
// "f16", "bf16" or "both". Empty on a bad value.
std::vector<DType> parse_dtypes(const std::string& text);
// "NN", "NT", "TN", "TT", a comma-separated list of distinct ones, or "all". Empty on a bad list.
std::vector<Layout> parse_layouts(const std::string& text);
std::optional<int64_t> parse_int(const std::string& text, int64_t min, int64_t max);

// Leading dimensions and element counts of the three operands of a case, all
// row-major; `pad` extra elements per row exercise ld > row length.
struct Operands {
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t a_elems = 0, b_elems = 0, c_elems = 0;
};
Operands operands_for(const Shape& shape, Layout layout, int64_t pad = 0);

// Operands on the device: fp16 and bf16 both as raw 16-bit patterns.
using ElementBuffer = support::DeviceBuffer<uint16_t>;

GemmArgs make_args(DType dtype, Layout layout, const Shape& shape, const Operands& ops, const void* a,
                   const void* b, void* c, float alpha, float beta, cudaStream_t stream);

// A strided batch of N problems (check and bench --batch): each operand's
// matrices `stride` elements apart, rounded up to 8 elements (16 bytes) so
// that TMA takes them. N = 1: one plain matrix each, strides 0.
struct BatchLayout {
  int64_t count = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  BatchLayout(int64_t n, const Operands& ops);
  // Elements of each buffer: one matrix, or count strides.
  size_t total(int64_t elems, int64_t stride) const { return static_cast<size_t>(count == 1 ? elems : stride * count); }
  // The batch's fields of `args` (batch, stride_a/b/c).
  void apply(GemmArgs& args) const;
};

// support::compare over every problem of a batch (C's matrices stride_c
// apart): counts summed, the errors the worst problem's.
support::CompareStats compare_batch(DType dtype, const uint16_t* x, const uint16_t* ref, const Operands& ops,
                                    const Shape& s, const BatchLayout& batch, cudaStream_t stream);

// The fused epilogue a subcommand runs with (--activation, --bias): none by
// default.
struct FusedEpilogue {
  Activation activation = Activation::none;
  int bias = 0;  // 0 none, 1 the output's type, 2 fp32
  bool any() const { return activation != Activation::none || bias != 0; }
  // "none", "same" or "f32", as --bias and the fuzzer's cases spell it
  const char* bias_name() const;
  // "activation gelu, bias f32"
  std::string str() const;
  // Sets the activation from its name (to_string(Activation)) or the bias
  // from its name (bias_name); false for a name that is neither.
  bool set_activation(const std::string& name);
  bool set_bias(const std::string& name);
};
// Declares --activation and --bias; `what` says what they apply to.
void add_fused_epilogue_options(ArgParser& parser, const std::string& what);
// Parses them. Empty on success, otherwise the usage error to print.
std::string parse_fused_epilogue(const ArgParser& parser, FusedEpilogue* out);

// The bias vector of a fused call on the device, N elements: uniform(-1, 1)
// in the output's type, or in fp32 (from `seed`); nothing without a bias.
class BiasVector {
 public:
  BiasVector(const FusedEpilogue& fused, DType dtype, int64_t n, uint64_t seed, cudaStream_t stream);
  // Sets args' fused epilogue: the activation and this bias.
  void apply(GemmArgs& args) const;

 private:
  FusedEpilogue fused_;
  ElementBuffer same_;
  support::DeviceBuffer<float> f32_;
};

// "sm90 128x256x64/4st", "cublas", ...: backend plus tile and stage count
// (Plan::config), short enough for a table column.
std::string short_kernel(const Plan& plan);

// Whether two plans of one call run the same thing: the same backend and
// path and, for a kernel, the same configuration.
bool same_kernel(const Plan& a, const Plan& b);

// Runs `args` in every built-in configuration of `family` that takes it
// (support::builtin_variants; for an M-grouped call
// support::grouped_variants), one after another on args.stream: `reset`
// restores the output before each run, and `compare`, called once a run
// succeeded and the stream is synchronized, says how that output differs
// from the automatic choice's (nothing: the same bits). Returns a line for
// each configuration that failed ("<label> failed: <reason>") and compare's
// lines for those that differ: empty when every configuration agrees.
std::vector<std::string> check_builtin_configs(
    Backend family, const GemmArgs& args, const std::function<void()>& reset,
    const std::function<std::vector<std::string>(const support::KernelVariant&, const Plan&)>& compare);

// Prints "tcgemm <command>: <message>" and where the usage is on stderr; returns kExitUsage.
int usage_error(const ArgParser& parser, const std::string& message);

// Makes `device` current. Without a visible CUDA device, prints why on stderr
// and returns false: callers then exit with kExitUsage.
bool select_device(int device);

double median(std::vector<double> values);
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tcgemm::cli
