// The fused epilogue, C = act(alpha * op(A) op(B) + bias) + beta * C: every
// configuration of the device's kernel family, every activation, bias of the
// output's type or fp32 or none, beta zero or not, equals the reference GEMM
// (which applies the same fp32 steps) bit for bit on small-integer inputs,
// where every accumulator is exact. And the calls that cannot fuse it are
// refused with nothing written.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm_case.hpp"
#include "support/elementwise.hpp"
#include "support/kernel_variants.hpp"

namespace tcgemm::test {
namespace {

class FusedEpilogue : public GpuTest {};

constexpr Activation kActivations[] = {Activation::none, Activation::relu, Activation::gelu, Activation::gelu_tanh,
                                       Activation::silu};

// A bias vector of n elements on the device: integers in [-3, 3] over 4 (exact in every type).
struct Bias {
  support::DeviceBuffer<uint16_t> same;  // the output's type
  support::DeviceBuffer<float> f32;
  Bias(DType dtype, int64_t n, uint64_t seed) : same(static_cast<size_t>(n)), f32(static_cast<size_t>(n)) {
    std::vector<float> host(static_cast<size_t>(n));
    std::vector<uint16_t> bits(host.size());
    for (size_t i = 0; i < host.size(); ++i) {
      // Seven values along the columns (once, i * 7 made every column the same, 0 for some seeds: a
      // bias read from the wrong column passed).
      host[i] = static_cast<float>(static_cast<int>((i * 3 + seed) % 7) - 3) / 4.0f;
      bits[i] = from_float(dtype, host[i]);
    }
    if (n > 1 && std::all_of(host.begin(), host.end(), [&](float v) { return v == host[0]; }))
      throw std::runtime_error("Bias: the same in every column, which cannot show a column read wrongly");
    check_cuda(cudaMemcpy(f32.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "bias f32");
    check_cuda(cudaMemcpy(same.data(), bits.data(), bits.size() * sizeof(uint16_t), cudaMemcpyHostToDevice),
               "bias");
  }
};

// tcgemm (with `options`) and the reference on the same fused call, compared
// bit for bit; and tcgemm's output against a float64 reference within the
// fused element-wise bound (support/error_bound.hpp), which shares no code
// with the epilogue: a wrong activation or bias read in the epilogue code that
// both kernels use cannot cancel out there.
void expect_fused_identical(Problem& prob, const Bias& bias, BiasType type, bool with_bias, Activation act,
                            const Options& options, const std::string& what,
                            const support::KernelVariant* forced = nullptr) {
  const GemmCase& gc = prob.gemm_case();
  const std::string full = what + " bias=" + (with_bias ? (type == BiasType::f32 ? "f32" : "same") : "none") +
                           " activation=" + to_string(act);
  SCOPED_TRACE(full);
  prob.poison_outputs();
  if (gc.beta != 0.0f) prob.fill_outputs(Fill::small_int, gc.seed + 99);
  auto fused = [&](uint16_t* c) {
    GemmArgs g = prob.args(c);
    g.bias = with_bias ? (type == BiasType::f32 ? static_cast<const void*>(bias.f32.data())
                                                : static_cast<const void*>(bias.same.data()))
                       : nullptr;
    g.bias_type = type;
    g.activation = act;
    return g;
  };
  TCGEMM_ASSERT_OK(run_reference(fused(prob.c_ref())), "reference " + full);
  const Plan plan = run_gemm(fused(prob.c()), options);
  TCGEMM_ASSERT_OK(plan, full);
  EXPECT_NE(plan.backend, Backend::cublas) << plan.reason;
  if (forced != nullptr) expect_ran(plan, *forced, full);
  // (ReLU with beta = 0 zeroes about half of C: the rest must still be there.)
  expect_identical(compare(gc.dtype, prob.download_c(), prob.download_ref(), poison_bits(gc.dtype), gc.m, gc.n,
                           gc.ldc),
                   full, act == Activation::relu ? 0.35 : 0.5);
  const support::ElementwiseStats st =
      support::check_elementwise(fused(prob.c()), gc.beta != 0.0f ? prob.c0() : nullptr);
  EXPECT_EQ(st.nonfinite, 0);
  EXPECT_EQ(st.beyond, 0) << st.first.str();
}

TEST_F(FusedEpilogue, EveryActivationAndBiasEqualsTheReference) {
  uint64_t seed = 50000;
  // Shapes with ragged edges (M, N not multiples of the tiles; N odd: the
  // element-by-element copy of the last panel) and a decoding one (64-row tiles).
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape s : {Shape{300, 260, 200}, Shape{130, 131, 96}, Shape{8, 512, 256}})
    for (const Layout& layout : {kLayouts[0], kLayouts[1]})
      for (DType dt : {DType::f16, DType::bf16})
        for (float beta : {0.0f, 0.5f}) {
          GemmCase gc = make_case(dt, layout, s.m, s.n, s.k, Fill::small_int, ++seed);
          gc.alpha = 0.25f;
          gc.beta = beta;
          Problem prob(gc);
          const Bias bias(dt, gc.n, seed);
          for (Activation act : kActivations)
            for (int b = 0; b < 3; ++b)
              expect_fused_identical(prob, bias, b == 2 ? BiasType::f32 : BiasType::same, b > 0, act, Options{},
                                     gc.describe());
        }
}

TEST_F(FusedEpilogue, EveryConfigurationAppliesIt) {
  uint64_t seed = 51000;
  for (const support::KernelVariant& v : support::builtin_variants(own_backend()))
    for (const Layout& layout : {kLayouts[0], kLayouts[1]}) {
      if (!v.builds(layout.a, layout.b)) continue;
      GemmCase gc = make_case(DType::bf16, layout, 200, 330, 160, Fill::small_int, ++seed);
      gc.beta = 1.0f;
      Problem prob(gc);
      const Bias bias(gc.dtype, gc.n, seed);
      expect_fused_identical(prob, bias, BiasType::f32, true, Activation::silu, v.options,
                             gc.describe() + " " + v.label, &v);
    }
}

// Random inputs (uniform in (-1, 1)): every element within the fused
// epilogue's element-wise bound against a float64 reference
// (support/error_bound.hpp, fused_elementwise_bound).
TEST_F(FusedEpilogue, NumericInputsWithinTheElementwiseBound) {
  uint64_t seed = 54000;
  for (DType dt : {DType::f16, DType::bf16})
    for (float beta : {0.0f, 0.75f}) {
      GemmCase gc = make_case(dt, kLayouts[1], 300, 264, 1000, Fill::uniform_pm1, ++seed);
      gc.beta = beta;
      Problem prob(gc);
      const Bias bias(dt, gc.n, seed);
      for (Activation act : kActivations)
        for (int b = 0; b < 3; ++b) {
          prob.poison_outputs();
          if (beta != 0.0f) prob.fill_outputs(Fill::uniform_pm1, seed + 7);
          GemmArgs g = prob.args(prob.c());
          g.bias = b == 0 ? nullptr : b == 1 ? static_cast<const void*>(bias.same.data())
                                             : static_cast<const void*>(bias.f32.data());
          g.bias_type = b == 2 ? BiasType::f32 : BiasType::same;
          g.activation = act;
          const std::string what = gc.describe() + " bias kind " + std::to_string(b) + " " + to_string(act);
          TCGEMM_ASSERT_OK(run_gemm(g), what);
          const support::ElementwiseStats st = support::check_elementwise(g, prob.c0());
          EXPECT_EQ(st.nonfinite, 0) << what;
          EXPECT_EQ(st.beyond, 0) << what << ": " << st.first.str();
          EXPECT_GT(st.worst, 0.0) << what << ": nothing measured";
        }
    }
}

TEST_F(FusedEpilogue, KZeroIsTheActivatedBias) {
  uint64_t seed = 52000;
  for (DType dt : {DType::f16, DType::bf16}) {
    GemmCase gc = make_case(dt, kLayouts[0], 70, 90, 0, Fill::small_int, ++seed);
    gc.beta = 2.0f;
    Problem prob(gc);
    const Bias bias(dt, gc.n, seed);
    for (Activation act : kActivations) expect_fused_identical(prob, bias, BiasType::same, true, act, {}, gc.describe());
  }
}

// K == 0 has no product, so alpha does not enter: an infinite or NaN alpha
// (which times the empty sum would be NaN) gives alpha = 1's bits, with a
// fused epilogue or without.
TEST_F(FusedEpilogue, KZeroIgnoresANonFiniteAlpha) {
  GemmCase gc = make_case(DType::bf16, kLayouts[0], 70, 90, 0, Fill::small_int, 52500);
  gc.beta = 0.5f;
  Problem prob(gc);
  const Bias bias(gc.dtype, gc.n, 52501);
  const float inf = std::numeric_limits<float>::infinity();
  for (const bool fused : {true, false}) {
    const auto run = [&](float alpha) -> std::vector<uint16_t> {
      prob.fill_outputs(Fill::small_int, 52502);
      GemmArgs g = prob.args(prob.c());
      g.alpha = alpha;
      if (fused) {
        g.bias = bias.f32.data();
        g.bias_type = BiasType::f32;
        g.activation = Activation::gelu;
      }
      const Plan p = run_gemm(g);
      EXPECT_EQ(p.status, Status::ok) << gc.describe() << " alpha=" << alpha << ": " << p.reason;
      return prob.download_c();
    };
    const std::vector<uint16_t> want = run(1.0f);
    for (const float alpha : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -2.0f}) {
      const std::string what = std::string(fused ? "fused" : "plain") + " K=0 alpha=" + std::to_string(alpha);
      expect_identical(compare(gc.dtype, run(alpha), want, poison_bits(gc.dtype), gc.m, gc.n, gc.ldc), what);
    }
  }
}

TEST_F(FusedEpilogue, RefusedWhereItCannotBeFusedAndNothingWritten) {
  GemmCase gc = make_case(DType::f16, kLayouts[0], 64, 64, 64, Fill::small_int, 53000);
  Problem prob(gc);
  const Bias bias(gc.dtype, gc.n, 1);
  prob.poison_outputs();
  GemmArgs g = prob.args(prob.c());
  g.bias = bias.same.data();
  g.activation = Activation::relu;
  Options cublas;
  cublas.prefer = Prefer::cublas_only;
  const Plan p = run_gemm(g, cublas);
  EXPECT_EQ(p.status, Status::unsupported) << p.reason;
  EXPECT_TRUE(contains(p.reason, "no fused bias/activation epilogue")) << p.reason;
  // Host memory as the bias: refused like any operand that is not on the device.
  std::vector<uint16_t> host_bias(static_cast<size_t>(gc.n));
  g.bias = host_bias.data();
  const Plan host = run_gemm(g);
  EXPECT_EQ(host.status, Status::invalid_argument) << host.reason;
  EXPECT_TRUE(contains(host.reason, "bias")) << host.reason;
  const std::vector<uint16_t> c = prob.download_c();
  for (uint16_t bits : c) ASSERT_EQ(bits, poison_bits(gc.dtype)) << "a refused call wrote C";
}

}  // namespace
}  // namespace tcgemm::test
