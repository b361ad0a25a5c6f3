// The built-in cases of `tcgemm check` and the suites of `tcgemm bench`.
// Shapes are MxNxK: C is M x N, the inner dimension is K.
#pragma once

#include <string>
#include <vector>

#include "cli_common.hpp"

namespace tcgemm::cli {

// ---------------------------------------------------------------------------
// check: each shape is here for a reason, printed with the case. The sm90
// kernel's tiles are 128 x {64 .. 256} x 64 with a 4- to 8-stage ring, or for
// M <= 64, 64 x {8 .. 256} x 64 with a 5- to 25-stage ring; shapes
// whose rows are not 16-byte multiples for some layout fall back to cuBLAS,
// which checks the dispatcher's fallback path as well.
// ---------------------------------------------------------------------------
struct CheckCase {
  Shape shape;
  const char* why;
  float alpha = 1.0f;
  float beta = 0.0f;  // non-zero: C starts with random values, the same for every backend
  int pad = 0;        // extra elements per row in every operand: ld > row length
  bool quick = false; // part of --quick
};

inline const std::vector<CheckCase>& check_cases() {
  static const std::vector<CheckCase> cases = {
      {{256, 256, 256}, "aligned, a few tiles", 1.0f, 0.0f, 0, true},
      {{1024, 1024, 1024}, "aligned, one wave"},
      {{129, 257, 65}, "one past a tile in M, N and K", 1.0f, 0.0f, 0, true},
      {{17, 24, 40}, "smaller than one tile", 1.0f, 0.0f, 0, true},
      {{1, 1, 1}, "a single element"},
      {{256, 256, 1000}, "K wraps the stage ring, partial last k-block", 1.0f, 0.0f, 0, true},
      {{4096, 4096, 256}, "more tiles than 2x the SMs (persistent loop)"},
      {{3000, 5000, 200}, "many tiles with ragged edges in M, N and K", 1.0f, 0.0f, 0, true},
      {{384, 384, 384}, "padded leading dimensions (ld = row + 8)", 1.0f, 0.0f, 8},
      // Real model shapes, 512 tokens: Llama-2-7B attention output (4096 ->
      // 4096), MLP up/gate (4096 -> 11008) and down (11008 -> 4096).
      {{512, 4096, 4096}, "Llama-2-7B o_proj, 512 tokens"},
      {{512, 11008, 4096}, "Llama-2-7B up/gate proj, 512 tokens"},
      {{512, 4096, 11008}, "Llama-2-7B down proj, 512 tokens"},
      {{4096, 4096, 4096}, "large square, 4096 tokens x hidden 4096"},
      // Decoding (M <= 64: 64-row tiles, A's box cut to M rounded up to 8,
      // C stored from registers).
      {{1, 4096, 1024}, "one token (decode)", 1.0f, 0.0f, 0, true},
      {{40, 4104, 1000}, "decode batch: ragged M, N edge, K tail"},
      {{7, 257, 200}, "alpha/beta at decode size (odd N: the last column alone)", 0.5f, 2.0f, 0, true},
      // alpha/beta: C is read, scaled and accumulated into.
      {{256, 384, 192}, "alpha/beta, aligned", 0.5f, 2.0f, 0, true},
      {{129, 257, 65}, "alpha/beta, ragged", 0.5f, 2.0f},
      {{96, 80, 0}, "K = 0: C = beta * C", 0.5f, 2.0f},
  };
  return cases;
}

// ---------------------------------------------------------------------------
// bench suites
// ---------------------------------------------------------------------------
struct BenchSuite {
  const char* name;
  const char* description;
  std::vector<Shape> shapes;
  // Inputs are uniform in [lo, hi): the leaderboard uses uniform_(0, 1).
  float lo, hi;
  // The layouts when --layout is not given: NN (the leaderboard's), or NT
  // for the layers of a model (nn.Linear: y = x W^T, W stored N x K).
  const char* default_layout = "NN";
};

// The linear layers of public model families as (N, K): y = x W^T with the
// weight W stored N x K; fused QKV and gate+up projections as one GEMM each.
struct Projection {
  int64_t n, k;
};
inline const std::vector<Projection>& llm_projections() {
  static const std::vector<Projection> p = {
      // Llama-2-7B: hidden 4096, MLP 11008, 32 heads (QKV 3 x 4096)
      {12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
      // Llama-3-8B and Mistral-7B: hidden 4096, MLP 14336, 8 KV heads of 128 (QKV 4096 + 2 x 1024)
      {6144, 4096}, {28672, 4096}, {4096, 14336},
      // Llama-2/3-70B: hidden 8192, MLP 28672, 8 KV heads of 128 (QKV 8192 + 2 x 1024)
      {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672},
      // Qwen2-7B: hidden 3584, MLP 18944, 4 KV heads of 128 (QKV 3584 + 2 x 512)
      {4608, 3584}, {3584, 3584}, {37888, 3584}, {3584, 18944},
  };
  return p;
}

// A small model's layers, as HF transformers' Llama runs them (q, k, v,
// gate and up as separate projections): hidden 2048, MLP 5632, vocabulary
// 32000, the shapes of TinyLlama-1.1B with 32 heads of 64 and of the model
// python/examples/llama_decode.py builds (16 heads of 128, no GQA): the
// latency regime, weights of 1-23 MB (the lm_head's 131 MB aside).
inline const std::vector<Projection>& small_model_projections() {
  static const std::vector<Projection> p = {
      {2048, 2048},   // q, k, v (without GQA), o
      {256, 2048},    // k, v with TinyLlama's 4 KV heads of 64
      {5632, 2048},   // gate, up
      {2048, 5632},   // down
      {32000, 2048},  // lm_head
  };
  return p;
}

// Every projection at each of `tokens` (M: tokens in flight).
inline std::vector<Shape> projection_shapes(const std::vector<Projection>& projections,
                                            const std::vector<int64_t>& tokens) {
  std::vector<Shape> out;
  for (const int64_t m : tokens)
    for (const Projection& p : projections) out.push_back({m, p.n, p.k});
  return out;
}
inline std::vector<Shape> llm_shapes(const std::vector<int64_t>& tokens) {
  return projection_shapes(llm_projections(), tokens);
}

inline const std::vector<BenchSuite>& bench_suites() {
  static const std::vector<BenchSuite> suites = {
      // gpu-mode/reference-kernels matmul_v2 benchmarks, given there as
      // (m, n, k): a is m x k, b is k x n, fp16 row-major (layout NN). The
      // ranked score is the time of the last shape.
      {"matmul_v2",
       "GPU MODE matmul_v2 leaderboard benchmarks (fp16 NN, inputs uniform(0,1))",
       {{128, 128, 128},
        {256, 256, 256},
        {512, 512, 512},
        {1024, 1024, 1024},
        {2048, 2048, 2048},
        {1024, 1536, 1024},
        {2048, 3072, 2048},
        {4096, 5120, 4096}},
       0.0f,
       1.0f},
      // Large square and rectangular problems where cuBLAS is near the
      // sustained tensor-core ceiling, and one with a short K.
      {"large",
       "large problems (inputs uniform(-1,1))",
       {{8192, 8192, 8192}, {4096, 5120, 4096}, {6144, 4096, 12288}, {16384, 8192, 1024}, {4096, 4096, 4096}},
       -1.0f,
       1.0f},
      // Transformer projections for a batch of 8192 tokens (M = tokens):
      //   Llama-2-7B: hidden 4096, MLP 11008, 32 heads (fused QKV = 3 x 4096)
      //   Llama-3-70B: hidden 8192, MLP 28672, 64 query heads and 8 KV heads
      //   of 128 (fused QKV = 8192 + 2 x 1024 = 10240)
      {"prefill8k",
       "transformer projections, 8192 tokens (inputs uniform(-1,1))",
       {{8192, 12288, 4096},    // 7B fused QKV
        {8192, 4096, 4096},     // 7B attention output
        {8192, 22016, 4096},    // 7B fused gate + up
        {8192, 4096, 11008},    // 7B down
        {8192, 10240, 8192},    // 70B fused QKV (GQA)
        {8192, 8192, 28672}},   // 70B down
       -1.0f,
       1.0f},
      // The linear layers of Llama-2/3 (7-8B, 70B), Mistral-7B and Qwen2-7B
      // (llm_projections) from decoding (M = 1-64 tokens in flight, where
      // the weight's bytes are the whole cost) to prefill (512, 4096), in
      // the nn.Linear layout.
      {"llm",
       "model linear layers (Llama 2/3 7-8B and 70B, Mistral, Qwen2) at M = 1..4096, NT (inputs uniform(-1,1))",
       llm_shapes({1, 2, 4, 8, 16, 32, 64, 128, 512, 4096}),
       -1.0f,
       1.0f,
       "NT"},
      // The decoding part of llm alone (M <= 64).
      {"decode",
       "model linear layers at M = 1..64 (decoding), NT (inputs uniform(-1,1))",
       llm_shapes({1, 2, 4, 8, 16, 32, 64}),
       -1.0f,
       1.0f,
       "NT"},
      // A small model (small_model_projections) decoding: M = 1..64.
      {"small",
       "small-model linear layers (hidden 2048: TinyLlama-1.1B, the Llama example) at M = 1..64, NT "
       "(inputs uniform(-1,1))",
       projection_shapes(small_model_projections(), {1, 2, 4, 8, 16, 32, 64}),
       -1.0f,
       1.0f,
       "NT"},
      // Token counts between the llm suite's, where a tile's rows run past M
      // (64-row tiles past 64 rows, 128-row tiles past 128): prefill batches and
      // speculative decoding, on four of Llama-3-8B's layers (q/o, k/v, up,
      // down). The shapes on which A's box past M cost up to 2.3x (docs/PERF.md).
      {"rows",
       "token counts between the llm suite's (M = 72..3000, rows past the last tile), NT (inputs uniform(-1,1))",
       projection_shapes({{4096, 4096}, {1024, 4096}, {14336, 4096}, {4096, 14336}},
                         {72, 80, 100, 136, 160, 200, 288, 320, 448, 640, 1000, 1536, 3000}),
       -1.0f,
       1.0f,
       "NT"},
      // A narrow N at large M, in the nn.Linear layout: a mixture-of-experts
      // router (N = experts) or a low-rank adapter's down projection over a
      // prefill's tokens. Every tile width makes one column of tiles here,
      // so the choice of width is the share of its columns inside N.
      {"narrow",
       "narrow outputs at large M (MoE routers, low-rank adapters), NT (inputs uniform(-1,1))",
       {{10240, 16, 8192}, {16384, 32, 4096}, {32768, 64, 4096}, {8192, 128, 4096}, {16384, 128, 4096}},
       -1.0f,
       1.0f,
       "NT"},
  };
  return suites;
}

}  // namespace tcgemm::cli
