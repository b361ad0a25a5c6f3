// `tcgemm bench --chain`: a chain of dependent GEMMs timed whole, the way a
// model runs them: the MLP of a decoding step, layer after layer.
//
// Per M: kLayers layers of y = (x @ W_up^T) @ W_down^T (Llama-3-8B's MLP
// sizes: 4096 -> 14336 -> 4096, nn.Linear layout NT), each GEMM reading the
// previous one's output, so they run strictly in order and each launch can
// overlap only the tail of the one before it. Variants, interleaved and in a
// rotating order: tcgemm (Options::pdl, the default), tcgemm without it, and
// cuBLAS (cublasGemmEx through tcgemm's fallback). Each timed chain is
// bracketed by its own events after an L2 flush; medians over the repeats.
// The weights of all layers are distinct (2 x 117 MB per layer), so every
// GEMM streams its weight from HBM as in a real model.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_report.hpp"
#include "chain.hpp"
#include "cli_common.hpp"
#include "cuda_check.hpp"
#include "support/compare.hpp"
#include "support/device_buffer.hpp"
#include "support/fill.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

namespace {

constexpr int kLayers = 8;
constexpr int64_t kHidden = 4096, kIntermediate = 14336;
constexpr int64_t kChainRows[] = {1, 8, 32, 64};

struct Variant {
  const char* name;
  Options options;
};

// The chain's buffers for one M: activations (x, h, y per layer) and weights.
class MlpChain {
 public:
  MlpChain(DType dtype, int64_t m, uint64_t seed, cudaStream_t stream) : dtype_(dtype), m_(m), stream_(stream) {
    x_ = ElementBuffer(static_cast<size_t>(m * kHidden));
    for (int l = 0; l < kLayers; ++l) {
      up_.emplace_back(static_cast<size_t>(kIntermediate * kHidden));
      down_.emplace_back(static_cast<size_t>(kHidden * kIntermediate));
      h_.emplace_back(static_cast<size_t>(m * kIntermediate));
      y_.emplace_back(static_cast<size_t>(m * kHidden));
      // uniform(-a, a) with a = sqrt(3 / K): variance 1 / K, so the
      // activations keep unit variance through every layer.
      const float a_up = std::sqrt(3.0f / kHidden), a_down = std::sqrt(3.0f / kIntermediate);
      support::fill_random(dtype, up_[l].data(), up_[l].size(), support::uniform(-a_up, a_up), seed + 2 * l + 1,
                           stream);
      support::fill_random(dtype, down_[l].data(), down_[l].size(), support::uniform(-a_down, a_down),
                           seed + 2 * l + 2, stream);
    }
    support::fill_random(dtype, x_.data(), x_.size(), support::uniform(-1.0f, 1.0f), seed, stream);
  }

  // Enqueues the whole chain; the first failure's message, or empty.
  std::string run(const Options& options) const {
    const uint16_t* in = x_.data();
    for (int l = 0; l < kLayers; ++l) {
      if (std::string why = linear(in, up_[l].data(), h_[l].data(), kIntermediate, kHidden, options); !why.empty())
        return why;
      if (std::string why = linear(h_[l].data(), down_[l].data(), y_[l].data(), kHidden, kIntermediate, options);
          !why.empty())
        return why;
      in = y_[l].data();
    }
    return {};
  }
  const uint16_t* output() const { return y_.back().data(); }
  int64_t output_elems() const { return m_ * kHidden; }

 private:
  // out[m x n] = in[m x k] @ w[n x k]^T
  std::string linear(const uint16_t* in, const uint16_t* w, uint16_t* out, int64_t n, int64_t k,
                     const Options& options) const {
    constexpr Layout kNT{Op::N, Op::T};
    const Shape shape{m_, n, k};
    const Plan p = gemm(make_args(dtype_, kNT, shape, operands_for(shape, kNT), in, w, out, 1.0f, 0.0f, stream_),
                        options);
    return p.status == Status::ok ? std::string() : p.reason;
  }

  DType dtype_;
  int64_t m_;
  cudaStream_t stream_;
  ElementBuffer x_;
  std::vector<ElementBuffer> up_, down_, h_, y_;
};

}  // namespace

int run_chain(const BenchSettings& s) {
  const DType dtype = s.dtypes.empty() ? DType::bf16 : s.dtypes.front();
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::unique_ptr<support::L2Flusher> flusher;
  if (s.flush != support::L2Flush::none) flusher = std::make_unique<support::L2Flusher>(s.flush);
  Options no_pdl;
  no_pdl.pdl = false;
  const Variant variants[] = {{"tcgemm", Options{}}, {"tcgemm, no PDL", no_pdl}, {"cuBLAS", {Prefer::cublas_only}}};
  constexpr int kVariants = static_cast<int>(std::size(variants));

  std::printf("chain: %d layers of (x @ W_up^T) @ W_down^T, %lld -> %lld -> %lld, %s NT, distinct weights; "
              "median of %d chains per variant, interleaved, %s\n",
              kLayers, static_cast<long long>(kHidden), static_cast<long long>(kIntermediate),
              static_cast<long long>(kHidden), to_string(dtype), s.repeats,
              flush_description(s.flush, "chain").c_str());
  std::printf("%-5s %14s %14s %14s %10s %10s  %s\n", "M", "tcgemm us", "no PDL us", "cuBLAS us", "vs cuBLAS",
              "PDL gain", "=no PDL / =cuBLAS");
  int status = kExitOk;
  for (const int64_t m : kChainRows) {
    const MlpChain chain(dtype, m, s.seed + static_cast<uint64_t>(m), stream);
    // Verify: the chain's output with and without PDL (must be identical)
    // and against cuBLAS (identical where cuBLAS does not split K).
    std::vector<ElementBuffer> outs;
    for (const Variant& v : variants) {
      if (std::string why = chain.run(v.options); !why.empty()) {
        std::fprintf(stderr, "tcgemm bench --chain: %s: %s\n", v.name, why.c_str());
        CHECK_CUDA(cudaStreamDestroy(stream));
        return kExitFailure;
      }
      outs.emplace_back(static_cast<size_t>(chain.output_elems()));
      CHECK_CUDA(cudaMemcpyAsync(outs.back().data(), chain.output(), outs.back().bytes(), cudaMemcpyDeviceToDevice,
                                 stream));
    }
    // (NaN or Inf in the output fails the run: two variants could agree on them.)
    bool finite = true;
    const auto same_as = [&](int v) {
      const support::CompareStats st =
          support::compare(dtype, outs[0].data(), kHidden, outs[v].data(), kHidden, m, kHidden, stream);
      finite = finite && st.nonfinite_x == 0;
      return st.identical_fraction();
    };
    const double same_no_pdl = same_as(1), same_cublas = same_as(2);
    if (same_no_pdl != 1.0 || !finite) status = kExitFailure;
    if (!finite) std::fprintf(stderr, "tcgemm bench --chain: M = %lld: NaN or Inf in tcgemm's output\n",
                              static_cast<long long>(m));

    std::vector<cudaEvent_t> events(2 * kVariants * static_cast<size_t>(s.repeats));
    for (cudaEvent_t& e : events) CHECK_CUDA(cudaEventCreate(&e));
    for (int r = 0; r < s.repeats; ++r) {
      for (int i = 0; i < kVariants; ++i) {
        const int v = (r + i) % kVariants;  // rotate which variant follows which
        if (flusher) flusher->flush(stream);
        CHECK_CUDA(cudaEventRecord(events[2 * (r * kVariants + v)], stream));
        (void)chain.run(variants[v].options);  // (verified above)
        CHECK_CUDA(cudaEventRecord(events[2 * (r * kVariants + v) + 1], stream));
      }
    }
    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<double> us[kVariants];
    for (int r = 0; r < s.repeats; ++r)
      for (int v = 0; v < kVariants; ++v) {
        float ms = 0.0f;
        CHECK_CUDA(cudaEventElapsedTime(&ms, events[2 * (r * kVariants + v)], events[2 * (r * kVariants + v) + 1]));
        us[v].push_back(1e3 * ms);
      }
    for (cudaEvent_t e : events) CHECK_CUDA(cudaEventDestroy(e));
    const double t[3] = {median(us[0]), median(us[1]), median(us[2])};
    std::printf("%-5lld %14.1f %14.1f %14.1f %9.3fx %9.3fx  %.1f%% / %.1f%%\n", static_cast<long long>(m), t[0], t[1],
                t[2], t[2] / t[0], t[1] / t[0], 100.0 * same_no_pdl, 100.0 * same_cublas);
    std::fflush(stdout);
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
  return status;
}

}  // namespace tcgemm::cli
