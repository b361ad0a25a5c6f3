// Usage the other GPU suites do not reach, each a promise of tcgemm.h /
// tcgemm.hpp checked the way a user of the C ABI or the C++ API would lean
// on it:
//   - CUDA graphs through the C ABI's other entry points: tcgemm_gemm_epilogue,
//     tcgemm_gemm_strided_batched (a store-bound batch, the counted schedule
//     on an H100, and one with a stride only cuBLAS takes) and
//     tcgemm_gemm_m_grouped, captured in each mode (global, thread_local,
//     relaxed), replayed over new inputs with the eager call's bits;
//   - the cuBLAS fallback from one thread on several streams at once, and a
//     graph of it replayed while the same thread runs it eagerly on another
//     stream (one cuBLAS handle a thread: any state it shares across streams
//     would mix the calls' results);
//   - alpha and beta NaN, +Inf and -0.0 on every path (tcgemm's 128-row,
//     64-row, decode and swapped tiles, the cuBLAS fallback, the K == 0 scale),
//     against IEEE arithmetic on the documented formula;
//   - a strided batch whose C matrices sit side by side in C's rows, at K == 0
//     and alpha == 0, with and without a fused epilogue (the scale kernel);
//   - leading dimensions and a batch stride past 2^32 elements (an 8 GiB
//     row pitch), where any 32-bit truncation lands rows in the wrong place.
// Small-integer inputs keep every fp32 sum exact, so results are compared bit
// for bit; every output buffer is poisoned or filled before each call, and
// what lies outside M x N is checked unchanged.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gemm_case.hpp"
#include "graph_support.hpp"
#include "tcgemm/tcgemm.h"

namespace tcgemm::test {
namespace {

using Buffer = support::DeviceBuffer<uint16_t>;

class InUse : public GpuTest {};

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

// The call `g` describes, through the C ABI entry point a user would pick
// for it: tcgemm_gemm_m_grouped (groups), tcgemm_gemm_strided_batched
// (batch != 1), tcgemm_gemm_epilogue (otherwise; with no bias and no
// activation it is tcgemm_gemm).
int call_c_abi(const GemmArgs& g) {
  const int dt = static_cast<int>(g.dtype), oa = static_cast<int>(g.op_a), ob = static_cast<int>(g.op_b);
  if (g.groups > 0)
    return tcgemm_gemm_m_grouped(dt, ob, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.stride_b, g.beta, g.c, g.ldc,
                                 g.group_ends, g.groups, g.stream);
  if (g.batch != 1)
    return tcgemm_gemm_strided_batched(dt, oa, ob, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.stride_a, g.b, g.ldb,
                                       g.stride_b, g.beta, g.c, g.ldc, g.stride_c, g.batch, g.stream);
  return tcgemm_gemm_epilogue(dt, oa, ob, g.m, g.n, g.k, g.alpha, g.a, g.lda, g.b, g.ldb, g.beta, g.c, g.ldc, g.bias,
                              static_cast<int>(g.bias_type), static_cast<int>(g.activation), g.stream);
}

// Elements that differ between two downloads of the same span.
int64_t differences(const std::vector<uint16_t>& x, const std::vector<uint16_t>& y, std::string* first = nullptr) {
  if (x.size() != y.size()) return static_cast<int64_t>(std::max(x.size(), y.size()));
  int64_t n = 0;
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != y[i] && n++ == 0 && first != nullptr)
      *first = "element " + std::to_string(i) + ": " + std::to_string(x[i]) + " vs " + std::to_string(y[i]);
  return n;
}

// fp16 / bf16 bit patterns: NaN, +Inf, -Inf.
bool is_nan(DType dt, uint16_t v) {
  return dt == DType::f16 ? (v & 0x7C00) == 0x7C00 && (v & 0x03FF) != 0 : (v & 0x7F80) == 0x7F80 && (v & 0x007F) != 0;
}
std::string hex(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}
uint16_t pos_inf(DType dt) { return dt == DType::f16 ? 0x7C00 : 0x7F80; }
uint16_t neg_inf(DType dt) { return dt == DType::f16 ? 0xFC00 : 0xFF80; }

std::vector<float> quarters(int64_t n, uint64_t seed) {
  // Integers in [-3, 3] over 4: exact in fp16, bf16 and fp32, and not the same in every column.
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 3 + seed) % 7) - 3) / 4.0f;
  return v;
}

// ---------------------------------------------------------------------------
// CUDA graphs through the C ABI's epilogue, batched and M-grouped entry points
// ---------------------------------------------------------------------------

// One call's operands and outputs: C (what the graph writes), C_eager (what
// the same call made eagerly writes) and C_ref (reference_gemm's), all reset
// from C0 before each run, so that everything outside the product (padding,
// rows past the groups' ends) is compared too.
struct AbiCase {
  std::string name;
  GemmArgs args;  // c and stream set per run
  size_t a_elems = 0, b_elems = 0, c_elems = 0;
  Buffer a, b, c, c_eager, c_ref, c0;
  support::DeviceBuffer<float> bias;
  support::DeviceBuffer<int32_t> ends;

  void allocate() {
    a = Buffer(a_elems);
    b = Buffer(b_elems);
    c = Buffer(c_elems);
    c_eager = Buffer(c_elems);
    c_ref = Buffer(c_elems);
    c0 = Buffer(c_elems);
    args.a = a.data();
    args.b = b.data();
  }
  // New small integers in A and B (every element, gaps included: never read
  // by a correct call) and in C0; the same pointers, as a graph needs.
  void refill(uint64_t seed) {
    support::fill_random(args.dtype, a.data(), static_cast<int64_t>(a_elems), support::integers(-2, 2), seed * 3 + 1);
    support::fill_random(args.dtype, b.data(), static_cast<int64_t>(b_elems), support::integers(-2, 2), seed * 3 + 2);
    support::fill_random(args.dtype, c0.data(), static_cast<int64_t>(c_elems), support::integers(-2, 2), seed * 3 + 3);
    check_cuda(cudaDeviceSynchronize(), "refill");
  }
  // (A device-to-device cudaMemcpy does not wait for itself to finish, and
  // the calls run on a non-blocking stream, which the legacy stream's copy
  // does not order: without the synchronization a call of 128 MB of C can
  // run before its reset has finished and be overwritten by it.)
  void reset_outputs() {
    for (uint16_t* out : {c.data(), c_eager.data(), c_ref.data()})
      check_cuda(cudaMemcpy(out, c0.data(), c_elems * 2, cudaMemcpyDeviceToDevice), "reset C");
    check_cuda(cudaDeviceSynchronize(), "reset C");
  }
  GemmArgs into(uint16_t* out, cudaStream_t stream) const {
    GemmArgs g = args;
    g.c = out;
    g.stream = stream;
    return g;
  }
};

std::unique_ptr<AbiCase> epilogue_case() {
  auto p = std::make_unique<AbiCase>();
  p->name = "tcgemm_gemm_epilogue (fp32 bias, silu, beta 0.5, the nn.Linear layout)";
  GemmArgs& g = p->args;
  g.dtype = DType::bf16;
  g.op_a = Op::N;
  g.op_b = Op::T;
  g.m = 40;
  g.n = 256;
  g.k = 136;
  g.lda = 136;
  g.ldb = 136;
  g.ldc = 264;  // (8 columns of padding a row: not to be written)
  g.beta = 0.5f;
  g.bias_type = BiasType::f32;
  g.activation = Activation::silu;
  p->a_elems = static_cast<size_t>(g.m * g.lda);
  p->b_elems = static_cast<size_t>(g.n * g.ldb);
  p->c_elems = static_cast<size_t>((g.m + kGuardRows) * g.ldc);
  p->allocate();
  const std::vector<float> host = quarters(g.n, 5);
  p->bias = support::DeviceBuffer<float>(host.size());
  check_cuda(cudaMemcpy(p->bias.data(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), "bias");
  g.bias = p->bias.data();
  return p;
}

// A strided batch of NN products, each operand's matrices packed one after
// another, A's and C's `a_gap` and `c_gap` elements further apart (the gaps
// are never to be read or written).
std::unique_ptr<AbiCase> batch_case(std::string name, DType dtype, int64_t m, int64_t n, int64_t k, int64_t batch,
                                    float beta, int64_t a_gap, int64_t c_gap) {
  auto p = std::make_unique<AbiCase>();
  p->name = std::move(name);
  GemmArgs& g = p->args;
  g.dtype = dtype;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = n;
  g.ldc = n;
  g.beta = beta;
  g.batch = batch;
  g.stride_a = m * k + a_gap;
  g.stride_b = k * n;
  g.stride_c = m * n + c_gap;
  p->a_elems = static_cast<size_t>(g.batch * g.stride_a);
  p->b_elems = static_cast<size_t>(g.batch * g.stride_b);
  p->c_elems = static_cast<size_t>(g.batch * g.stride_c + kGuardRows * g.ldc);
  p->allocate();
  return p;
}

// A long batch of store-bound products (8192 output tiles): tcgemm chooses the
// counted schedule for it on a GPU with less than 56 MiB of L2 (an H100), and
// a call captured into a graph then takes a tile counter of its own.
std::unique_ptr<AbiCase> counted_batch_case() {
  return batch_case("tcgemm_gemm_strided_batched (128 x 1024 x 1024 x 128, store-bound)", DType::bf16, 1024, 1024,
                    128, 128, 0.0f, 0, 0);
}

// A batch stride TMA cannot describe (one element past whole rows): the
// strided batched cuBLAS fallback, beta != 0, 16 elements between the C_i.
std::unique_ptr<AbiCase> cublas_batch_case() {
  return batch_case("tcgemm_gemm_strided_batched (odd stride_a: cuBLAS, beta 1)", DType::f16, 96, 80, 48, 6, 1.0f, 1,
                    16);
}

// Four experts, one empty, the last 10 rows in no group (left as they were).
std::unique_ptr<AbiCase> grouped_case() {
  auto p = std::make_unique<AbiCase>();
  p->name = "tcgemm_gemm_m_grouped (4 groups, one empty, rows past the last end)";
  GemmArgs& g = p->args;
  g.dtype = DType::f16;
  g.op_b = Op::T;
  g.m = 300;
  g.n = 256;
  g.k = 128;
  g.lda = 128;
  g.ldb = 128;
  g.ldc = 256;
  g.groups = 4;
  g.stride_b = g.n * g.ldb;
  p->a_elems = static_cast<size_t>(g.m * g.lda);
  p->b_elems = static_cast<size_t>(g.groups * g.stride_b);
  p->c_elems = static_cast<size_t>((g.m + kGuardRows) * g.ldc);
  p->allocate();
  const std::vector<int32_t> ends = {50, 50, 200, 290};
  p->ends = support::DeviceBuffer<int32_t>(ends.size());
  check_cuda(cudaMemcpy(p->ends.data(), ends.data(), ends.size() * sizeof(int32_t), cudaMemcpyHostToDevice), "ends");
  g.group_ends = p->ends.data();
  return p;
}

// Each entry point captured in each mode: the capture returns 0 and runs
// nothing; each replay, after new inputs are written into the same buffers,
// has the bits of the same call made eagerly (whole buffers: nothing more or
// less written), which are those of reference_gemm (exact on integers).
TEST_F(InUse, CAbiEntryPointsCapturedInEveryModeReplayEagerBits) {
  std::vector<std::unique_ptr<AbiCase>> cases;
  cases.push_back(epilogue_case());
  cases.push_back(counted_batch_case());
  cases.push_back(cublas_batch_case());
  cases.push_back(grouped_case());
  Stream stream;
  uint64_t seed = 91000;
  for (const auto& cp : cases) {
    AbiCase& p = *cp;
    const Plan eager_plan = plan(p.into(p.c_eager.data(), stream));
    TCGEMM_ASSERT_OK(eager_plan, p.name);
    SCOPED_TRACE(p.name + ": runs " + eager_plan.kernel + " (" + eager_plan.reason + ")");
    for (const CaptureMode& mode : kModes) {
      SCOPED_TRACE(std::string("capture mode ") + mode.name);
      p.refill(++seed);
      p.reset_outputs();
      const std::vector<uint16_t> before = download(p.c.data(), p.c_elems);
      int captured_rc = -1;
      const Graph graph =
          Graph::capture(stream, mode.mode, [&] { captured_rc = call_c_abi(p.into(p.c.data(), stream)); });
      ASSERT_EQ(captured_rc, 0) << tcgemm_last_error();
      ASSERT_EQ(differences(download(p.c.data(), p.c_elems), before), 0)
          << "the call ran while being captured instead of being recorded";
      for (int round = 0; round < 2; ++round) {
        if (round > 0) p.refill(++seed);
        p.reset_outputs();
        ASSERT_EQ(call_c_abi(p.into(p.c_eager.data(), stream)), 0) << tcgemm_last_error();
        check_cuda(cudaStreamSynchronize(stream), "eager call");
        graph.replay(stream);
        TCGEMM_ASSERT_OK(run_reference(p.into(p.c_ref.data(), stream)), "reference");
        check_cuda(cudaStreamSynchronize(stream), "reference");
        const std::vector<uint16_t> eager = download(p.c_eager.data(), p.c_elems);
        std::string first;
        EXPECT_EQ(differences(download(p.c.data(), p.c_elems), eager, &first), 0)
            << "round " << round << ": the replay's bits differ from the eager call's; first at " << first;
        EXPECT_EQ(differences(eager, download(p.c_ref.data(), p.c_elems), &first), 0)
            << "round " << round << ": the eager call differs from reference_gemm; first at " << first;
        EXPECT_GT(differences(eager, download(p.c0.data(), p.c_elems)), static_cast<int64_t>(p.c_elems / 4))
            << "round " << round << ": the call left C mostly as it was (nothing to compare)";
      }
    }
  }
}

// ---------------------------------------------------------------------------
// The cuBLAS fallback from one thread on several streams at once
// ---------------------------------------------------------------------------

// tcgemm keeps one cuBLAS handle a thread and sets the call's stream on it.
// Calls of one thread on several streams run at once on the device; so do a
// graph captured from that thread and the thread's later eager calls. Long
// K against a small C invites cuBLAS's split-K kernels, which reduce through
// a workspace: anything the streams shared there would mix their partial
// sums. On small integers every fp32 sum is exact in any order, so every
// result must equal the same call made alone, bit for bit.
TEST_F(InUse, FallbackOnManyStreamsOfOneThreadGivesEachCallsOwnBits) {
  constexpr int kStreams = 4;
  const int64_t m = 128, n = 128, k = int64_t{1} << 17;
  const DType dt = DType::f16;
  // A one element past its allocation's start: not 16-byte aligned, so cuBLAS runs every call.
  Buffer a_buf(static_cast<size_t>(m * k + 1));
  support::fill_random(dt, a_buf.data() + 1, m * k, support::integers(-2, 2), 93001);
  std::vector<Buffer> b, c;
  std::vector<std::unique_ptr<Stream>> streams;
  std::vector<std::vector<uint16_t>> alone;
  const auto args = [&](int s, uint16_t* out, cudaStream_t stream) {
    GemmArgs g;
    g.dtype = dt;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = a_buf.data() + 1;
    g.lda = k;
    g.b = b[static_cast<size_t>(s)].data();
    g.ldb = n;
    g.c = out;
    g.ldc = n;
    g.stream = stream;
    return g;
  };
  for (int s = 0; s < kStreams; ++s) {
    b.emplace_back(static_cast<size_t>(k * n));
    c.emplace_back(static_cast<size_t>(m * n));
    streams.push_back(std::make_unique<Stream>());
    support::fill_random(dt, b.back().data(), k * n, support::integers(-2, 2), 93010 + static_cast<uint64_t>(s));
  }
  check_cuda(cudaDeviceSynchronize(), "fills");
  const Plan p = plan(args(0, c[0].data(), nullptr));
  TCGEMM_ASSERT_OK(p, "plan");
  ASSERT_EQ(p.backend, Backend::cublas) << p.reason;
  // Each call alone, waited for; against reference_gemm (exact on integers).
  Buffer ref(static_cast<size_t>(m * n));
  for (int s = 0; s < kStreams; ++s) {
    TCGEMM_ASSERT_OK(run_gemm(args(s, c[static_cast<size_t>(s)].data(), nullptr)), "alone");
    alone.push_back(download(c[static_cast<size_t>(s)].data(), static_cast<size_t>(m * n)));
    TCGEMM_ASSERT_OK(run_reference(args(s, ref.data(), nullptr)), "reference");
    ASSERT_EQ(differences(alone.back(), download(ref.data(), static_cast<size_t>(m * n))), 0)
        << "stream " << s << ": the fallback differs from reference_gemm on integers";
  }
  const auto poison_all = [&] {
    for (Buffer& out : c) fill_bits(out.data(), out.size(), poison_bits(dt));
    check_cuda(cudaDeviceSynchronize(), "poison");
  };
  const auto expect_each_alone = [&](const std::string& what) {
    check_cuda(cudaDeviceSynchronize(), what);
    for (int s = 0; s < kStreams; ++s) {
      std::string first;
      EXPECT_EQ(differences(download(c[static_cast<size_t>(s)].data(), static_cast<size_t>(m * n)),
                            alone[static_cast<size_t>(s)], &first),
                0)
          << what << ", stream " << s << ": not the bits of the call made alone; first at " << first;
    }
  };
  // Eager calls on every stream, nothing waited for in between.
  for (int round = 0; round < 10; ++round) {
    poison_all();
    for (int s = 0; s < kStreams; ++s) {
      const Plan q = tcgemm::gemm(args(s, c[static_cast<size_t>(s)].data(), *streams[static_cast<size_t>(s)]));
      ASSERT_EQ(q.status, Status::ok) << q.reason;
    }
    expect_each_alone("round " + std::to_string(round) + " of calls on " + std::to_string(kStreams) + " streams");
  }
  // A graph of stream 0's call (captured by this thread, relaxed mode) replayed while this thread runs the
  // other streams' calls eagerly.
  const Graph graph = Graph::capture(*streams[0], cudaStreamCaptureModeRelaxed, [&] {
    const Plan q = tcgemm::gemm(args(0, c[0].data(), *streams[0]));
    ASSERT_EQ(q.status, Status::ok) << q.reason;
  });
  for (int round = 0; round < 10; ++round) {
    poison_all();
    graph.launch(*streams[0]);
    for (int s = 1; s < kStreams; ++s) {
      const Plan q = tcgemm::gemm(args(s, c[static_cast<size_t>(s)].data(), *streams[static_cast<size_t>(s)]));
      ASSERT_EQ(q.status, Status::ok) << q.reason;
    }
    expect_each_alone("round " + std::to_string(round) + " of a replay beside eager calls");
  }
}

// ---------------------------------------------------------------------------
// alpha and beta NaN, +Inf and -0.0 on every path
// ---------------------------------------------------------------------------

struct NonFinitePath {
  const char* name;
  GemmCase gc;
  Options options;
  bool ours;  // tcgemm's own arithmetic (a kernel or the scale), not cuBLAS's
};

std::vector<NonFinitePath> nonfinite_paths() {
  std::vector<NonFinitePath> out;
  const auto add = [&](const char* name, DType dt, Layout layout, int64_t m, int64_t n, int64_t k, uint64_t seed,
                       Options options = {}, int64_t offset_a = 0) {
    GemmCase gc = make_case(dt, layout, m, n, k, Fill::small_int, seed);
    gc.offset_a = offset_a;
    out.push_back({name, gc, options, offset_a == 0});
  };
  add("128-row tile", DType::f16, kLayouts[0], 256, 256, 64, 94001);
  add("64-row tile", DType::bf16, kLayouts[1], 40, 512, 128, 94002);
  add("decode tile", DType::bf16, kLayouts[1], 4, 256, 256, 94003);
  Options swap;
  swap.swap_ab = true;
  add("swapped tile (forced)", DType::bf16, kLayouts[1], 300, 1024, 128, 94004, swap);
  add("cuBLAS fallback (A 2 bytes in)", DType::f16, kLayouts[0], 96, 80, 48, 94005, {}, 1);
  add("K == 0 scale", DType::f16, kLayouts[0], 70, 90, 0, 94006);
  return out;
}

// Runs the case with alpha, beta (C filled with small integers first) and
// checks every element of C in M x N with `want(r, c, c0 bits)`, which
// returns whether the element is right; everything outside M x N must keep
// its poison.
void expect_elements(Problem& prob, const NonFinitePath& path, float alpha, float beta,
                     const std::function<bool(int64_t, int64_t, uint16_t, uint16_t)>& want, const std::string& what) {
  const GemmCase& gc = prob.gemm_case();
  SCOPED_TRACE(std::string(path.name) + ", " + what + ": " + gc.describe());
  prob.fill_outputs(Fill::small_int, gc.seed + 7);
  const std::vector<uint16_t> c0 = download(prob.c0(), prob.c_span());
  GemmArgs g = prob.args(prob.c());
  g.alpha = alpha;
  g.beta = beta;
  const Plan p = run_gemm(g, path.options);
  TCGEMM_ASSERT_OK(p, what);
  EXPECT_EQ(p.backend == Backend::cublas, !path.ours) << p.kernel << ": " << p.reason;
  const std::vector<uint16_t> got = prob.download_c();
  int64_t wrong = 0, outside = 0;
  std::string first;
  for (int64_t r = 0; r < gc.m + kGuardRows; ++r)
    for (int64_t col = 0; col < gc.ldc; ++col) {
      const size_t i = static_cast<size_t>(r * gc.ldc + col);
      if (r >= gc.m || col >= gc.n) {
        outside += got[i] != poison_bits(gc.dtype);
        continue;
      }
      if (!want(r, col, c0[i], got[i]) && wrong++ == 0)
        first = "C[" + std::to_string(r) + "," + std::to_string(col) + "] = " + hex(got[i]) + " (c0 " +
                std::to_string(to_float(gc.dtype, c0[i])) + ")";
    }
  EXPECT_EQ(wrong, 0) << "ran " << p.kernel << "; first wrong element " << first;
  EXPECT_EQ(outside, 0) << "ran " << p.kernel << ": written outside M x N";
}

// C = alpha * op(A) op(B) + beta * C in fp32 (tcgemm.hpp), so: beta NaN
// makes every element NaN (C is read: beta != 0); alpha NaN does where there
// is a product (K > 0; at K == 0 alpha does not enter, tested elsewhere);
// beta +Inf gives beta * C's IEEE values (NaN where C held 0, +-Inf
// elsewhere: the product is finite); alpha +Inf gives NaN where the exact
// sum is 0 and +-Inf elsewhere (tcgemm's own paths: cuBLAS may fold alpha in
// elsewhere, its numbers are its own); alpha -0.0 is 0: A and B are not read
// (NaN in A does not reach C) and C = beta * C exactly.
TEST_F(InUse, NonFiniteAndSignedZeroAlphaBetaOnEveryPath) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const NonFinitePath& path : nonfinite_paths()) {
    Problem prob(path.gc);
    const GemmCase& gc = prob.gemm_case();
    const DType dt = gc.dtype;
    // The exact product (alpha 1, beta 0) from reference_gemm: small integers, every sum exact.
    if (gc.k > 0) {
      GemmArgs r = prob.args(prob.c_ref());
      r.beta = 0.0f;
      TCGEMM_ASSERT_OK(run_reference(r), "reference");
    }
    const std::vector<uint16_t> product = gc.k > 0 ? prob.download_ref() : std::vector<uint16_t>{};
    const auto is_written_nan = [dt](uint16_t v) { return is_nan(dt, v) && v != poison_bits(dt); };

    expect_elements(prob, path, 1.0f, nan, [&](int64_t, int64_t, uint16_t, uint16_t v) { return is_written_nan(v); },
                    "beta NaN");
    if (gc.k > 0)
      expect_elements(prob, path, nan, 0.0f, [&](int64_t, int64_t, uint16_t, uint16_t v) { return is_written_nan(v); },
                      "alpha NaN");
    expect_elements(
        prob, path, 1.0f, inf,
        [&](int64_t, int64_t, uint16_t c0, uint16_t v) {
          const float c = to_float(dt, c0);
          return c == 0.0f ? is_written_nan(v) : v == (c > 0.0f ? pos_inf(dt) : neg_inf(dt));
        },
        "beta +Inf");
    if (gc.k > 0 && path.ours)
      expect_elements(
          prob, path, inf, 0.0f,
          [&](int64_t r, int64_t col, uint16_t, uint16_t v) {
            const float s = to_float(dt, product[static_cast<size_t>(r * gc.ldc + col)]);
            return s == 0.0f ? is_written_nan(v) : v == (s > 0.0f ? pos_inf(dt) : neg_inf(dt));
          },
          "alpha +Inf");
    if (gc.k > 0) {
      // alpha -0.0 with A all NaN: the scale, C = 2 * C0 exactly.
      check_cuda(cudaMemset(prob.a(), 0xFF, static_cast<size_t>((gc.op_a == Op::N ? gc.m : gc.k) * gc.lda) * 2),
                 "NaN A");
      NonFinitePath scale = path;
      scale.ours = true;  // (the scale kernel, whatever the path)
      expect_elements(
          prob, scale, -0.0f, 2.0f,
          [&](int64_t, int64_t, uint16_t c0, uint16_t v) { return v == from_float(dt, 2.0f * to_float(dt, c0)); },
          "alpha -0.0, A NaN");
      GemmArgs z = prob.args(prob.c());
      z.alpha = -0.0f;
      EXPECT_EQ(plan(z).path, Path::scale) << path.name;
    }
  }
}

// ---------------------------------------------------------------------------
// A side-by-side batch at K == 0 and alpha == 0
// ---------------------------------------------------------------------------

// The C_i as column blocks of one C (attention heads in one [M, heads * N]
// tensor: stride_c = N, ldc >= batch * N), N not a multiple of 8, with eight
// columns of the caller's after them. With K == 0 or alpha == 0 the scale
// kernel runs: C_i = beta * C_i, or with a fused epilogue act(bias) + beta *
// C_i, rounded once; no column of a neighbour or of the padding is touched.
// The plain batch goes through tcgemm_gemm_strided_batched.
TEST_F(InUse, SideBySideBatchAtKZeroAndAlphaZero) {
  const DType dt = DType::bf16;
  const int64_t batch = 5, m = 37, n = 24 + 3, k = 64;
  const int64_t ldc = batch * n + 8;
  const size_t c_elems = static_cast<size_t>((m + kGuardRows) * ldc);
  Buffer a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(c_elems), c0(c_elems);
  check_cuda(cudaMemset(a.data(), 0xFF, a.bytes()), "NaN A");  // never read: K or alpha 0
  check_cuda(cudaMemset(b.data(), 0xFF, b.bytes()), "NaN B");
  fill_bits(c0.data(), c_elems, poison_bits(dt));
  support::fill_random(dt, c0.data(), m, batch * n, ldc, support::integers(-2, 2), 95001, poison_bits(dt));
  const std::vector<float> bias_host = quarters(n, 3);
  support::DeviceBuffer<float> bias(bias_host.size());
  check_cuda(cudaMemcpy(bias.data(), bias_host.data(), bias_host.size() * sizeof(float), cudaMemcpyHostToDevice),
             "bias");
  check_cuda(cudaDeviceSynchronize(), "fills");
  const std::vector<uint16_t> before = download(c0.data(), c_elems);

  GemmArgs base;
  base.dtype = dt;
  base.m = m;
  base.n = n;
  base.a = a.data();
  base.lda = k;
  base.b = b.data();
  base.ldb = n;
  base.ldc = ldc;
  base.batch = batch;
  base.stride_a = 0;
  base.stride_b = 0;
  base.stride_c = n;
  base.beta = 0.5f;
  struct Variant {
    const char* what;
    int64_t k;
    float alpha;
    bool fused;
    bool c_abi;
  };
  for (const Variant v : {Variant{"K = 0 via the C ABI", 0, 1.0f, false, true},
                          Variant{"alpha = 0 via the C ABI", k, 0.0f, false, true},
                          Variant{"K = 0, fused bias and relu", 0, 1.0f, true, false},
                          Variant{"alpha = 0, fused bias and gelu", k, 0.0f, true, false}}) {
    SCOPED_TRACE(v.what);
    check_cuda(cudaMemcpy(c.data(), c0.data(), c_elems * 2, cudaMemcpyDeviceToDevice), "reset C");
    GemmArgs g = base;
    g.k = v.k;
    g.alpha = v.alpha;
    g.c = c.data();
    if (v.fused) {
      g.bias = bias.data();
      g.bias_type = BiasType::f32;
      g.activation = v.k == 0 ? Activation::relu : Activation::gelu;
    }
    if (v.c_abi) {
      ASSERT_EQ(call_c_abi(g), 0) << tcgemm_last_error();
      check_cuda(cudaDeviceSynchronize(), v.what);
    } else {
      const Plan p = run_gemm(g);
      TCGEMM_ASSERT_OK(p, v.what);
      EXPECT_EQ(p.path, Path::scale) << p.reason;
    }
    const std::vector<uint16_t> got = download(c.data(), c_elems);
    int64_t wrong = 0, outside = 0;
    std::string first;
    for (int64_t r = 0; r < m + kGuardRows; ++r)
      for (int64_t col = 0; col < ldc; ++col) {
        const size_t i = static_cast<size_t>(r * ldc + col);
        if (r >= m || col >= batch * n) {
          outside += got[i] != before[i];
          continue;
        }
        const float old = to_float(dt, before[i]);
        float x = 0.0f;
        if (v.fused) {
          const float bcol = bias_host[static_cast<size_t>(col % n)];
          // (gelu from double's erf may differ from the kernel's fp32 gelu in the last bits of fp32; every
          // sum here, gelu of a quarter in [-3/4, 3/4] plus a half-integer, lies far from a bf16 rounding
          // boundary, so the rounded results agree.)
          const double gelu = 0.5 * bcol * (1.0 + std::erf(bcol / std::sqrt(2.0)));
          x = g.activation == Activation::relu ? std::max(bcol, 0.0f) : static_cast<float>(gelu);
        }
        const uint16_t want = from_float(dt, std::fma(0.5f, old, x));
        if (got[i] != want && wrong++ == 0)
          first = "C[" + std::to_string(r) + "," + std::to_string(col) + "] = " + std::to_string(to_float(dt, got[i])) +
                  ", want " + std::to_string(to_float(dt, want));
      }
    EXPECT_EQ(wrong, 0) << "first wrong element " << first;
    EXPECT_EQ(outside, 0) << "written in the padding columns or the guard rows";
  }
}

// ---------------------------------------------------------------------------
// Leading dimensions and batch strides past 2^32 elements
// ---------------------------------------------------------------------------

// Two rows of A and of C 2^32 + 64 elements apart (an 8 GiB pitch: TMA takes
// row strides up to 2^40 bytes), N not a multiple of 8 so that the last
// column panel is stored element by element: every address is row * ld,
// which truncated to 32 bits would put row 1 at element 64, over row 0 and
// into the 256 elements after it, which are checked to keep their poison.
// tcgemm's small-M tiles (M = 2) in both layouts of B and the cuBLAS
// fallback; and a strided batch whose C_i are 2^32 + 64
// elements apart. Each against the same call on compact copies (exact on
// integers). Skipped where the device has less than 20 GiB free.
TEST_F(InUse, LeadingDimensionsAndBatchStridesPastTwoToTheThirtyTwo) {
  size_t free_bytes = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  if (free_bytes < (size_t{20} << 30)) GTEST_SKIP() << "needs 20 GiB of free device memory, has " << free_bytes;
  const DType dt = DType::bf16;
  const int64_t huge = (int64_t{1} << 32) + 64;
  const int64_t m = 2, n = 203, k = 64, pad = 256;
  const uint16_t poison = poison_bits(dt);
  // A: rows `huge` apart, one element of slack in front (the misaligned variant); C likewise.
  Buffer a_big(static_cast<size_t>(huge + k + 1));
  Buffer c_big(static_cast<size_t>(huge + n + pad));
  // Compact copies: A (2 x 64), B both ways, C (2 x 203 in rows of 208 + guard rows).
  const int64_t ldc_small = 208;
  const int64_t ldb_nn = 208;  // (B stored K x N: rows 16 bytes apart, as TMA needs)
  Buffer a_small(static_cast<size_t>(m * k)), b_nn(static_cast<size_t>(k * ldb_nn)), b_nt(static_cast<size_t>(n * k));
  Buffer c_small(static_cast<size_t>((m + kGuardRows) * ldc_small));
  support::fill_random(dt, a_small.data(), m * k, support::integers(-2, 2), 96001);
  support::fill_random(dt, b_nn.data(), k, n, ldb_nn, support::integers(-2, 2), 96002, poison);
  support::fill_random(dt, b_nt.data(), n * k, support::integers(-2, 2), 96003);
  check_cuda(cudaDeviceSynchronize(), "fills");

  struct Variant {
    const char* what;
    Op op_b;
    int64_t a_offset;  // elements: 1 makes A's base 2 bytes off 16, for cuBLAS
    bool batched;      // C_i (one row each) `huge` apart instead of C's rows
  };
  for (const Variant v : {Variant{"M = 2, NN (small-M tile)", Op::N, 0, false},
                          Variant{"M = 2, NT (decode tile)", Op::T, 0, false},
                          Variant{"cuBLAS fallback, NT", Op::T, 1, false},
                          Variant{"strided batch of one-row problems, NT", Op::T, 0, true}}) {
    SCOPED_TRACE(v.what);
    uint16_t* a = a_big.data() + v.a_offset;
    for (int64_t r = 0; r < m; ++r)
      check_cuda(cudaMemcpy(a + r * huge, a_small.data() + r * k, static_cast<size_t>(k) * 2, cudaMemcpyDeviceToDevice),
                 "A row");
    for (int64_t r = 0; r < m; ++r) fill_bits(c_big.data() + r * huge, static_cast<size_t>(n + pad), poison);
    fill_bits(c_small.data(), c_small.size(), poison);
    check_cuda(cudaDeviceSynchronize(), "set up");
    const uint16_t* b = v.op_b == Op::N ? b_nn.data() : b_nt.data();
    const int64_t ldb = v.op_b == Op::N ? ldb_nn : k;

    GemmArgs g;
    g.dtype = dt;
    g.op_b = v.op_b;
    g.n = n;
    g.k = k;
    g.a = a;
    g.b = b;
    g.ldb = ldb;
    g.c = c_big.data();
    if (v.batched) {
      g.m = 1;
      g.lda = k;
      g.ldc = ldc_small;  // (one row: its leading dimension addresses nothing, but TMA wants it whole 16 bytes)
      g.batch = m;
      g.stride_a = huge;
      g.stride_b = 0;
      g.stride_c = huge;
    } else {
      g.m = m;
      g.lda = huge;
      g.ldc = huge;
    }
    const Plan p = run_gemm(g);
    TCGEMM_ASSERT_OK(p, v.what);
    EXPECT_EQ(p.backend, v.a_offset == 0 ? own_backend() : Backend::cublas) << p.kernel << ": " << p.reason;

    GemmArgs s = g;
    s.m = m;
    s.batch = 1;
    s.a = a_small.data();
    s.lda = k;
    s.c = c_small.data();
    s.ldc = ldc_small;
    TCGEMM_ASSERT_OK(run_reference(s), "reference on compact copies");
    const std::vector<uint16_t> want = download(c_small.data(), c_small.size());
    for (int64_t r = 0; r < m; ++r) {
      const std::vector<uint16_t> row = download(c_big.data() + r * huge, static_cast<size_t>(n + pad));
      int64_t wrong = 0, written_past = 0, nonzero = 0;
      for (int64_t col = 0; col < n; ++col) {
        wrong += row[static_cast<size_t>(col)] != want[static_cast<size_t>(r * ldc_small + col)];
        nonzero += support::is_nonzero(row[static_cast<size_t>(col)]);
      }
      for (int64_t col = n; col < n + pad; ++col) written_past += row[static_cast<size_t>(col)] != poison;
      EXPECT_EQ(wrong, 0) << "ran " << p.kernel << ": row " << r << " differs from the compact call's";
      EXPECT_GT(nonzero, n / 2) << "row " << r << " mostly zero";
      EXPECT_EQ(written_past, 0) << "ran " << p.kernel << ": written past row " << r
                                 << " (a row address truncated to 32 bits lands there)";
    }
  }
}

}  // namespace
}  // namespace tcgemm::test
