// API fuzzing of validation and dispatch through the C ABI, on the CPU.
//
// libFuzzer drives tcgemm_gemm() (and, on some inputs, tcgemm_gemm_strided_batched(),
// with batch counts and strides around the edges, tcgemm_gemm_epilogue(), with a
// bias pointer, bias type and activation drawn alike, or tcgemm_gemm_m_grouped(), with
// group counts, group-end pointers and B strides drawn alike) over its whole argument space: dtype and op
// values in and out of range, sizes from 0 to INT64_MAX and negative, leading
// dimensions around and far from the row length, null, host and (fake)
// device pointers, aligned or not, NaN/Inf scalars, and the device the call
// sees: an sm_90 or sm_100 GPU, another architecture, one this build holds
// no code for, or none.
//
// This binary links the library's host code (API, validation, dispatch, the
// kernel families' configuration and can_implement) with the recorder below
// in place of everything that would touch a GPU: the device query, the
// pointer-kind query and every launch (the kernels, cuBLAS, the reference and
// the K == 0 scale). So each call's outcome is observable without a GPU:
//   - no crash, no undefined behaviour (built with ASan and UBSan, which stop
//     the fuzzer at the first finding);
//   - a rejected call returns a Status, has a reason (tcgemm_last_error), and
//     launched nothing; a call that would run on no device, or on one the
//     build holds no code for, is rejected;
//   - an accepted call launched exactly once (nothing for an empty M or N),
//     with the caller's arguments, and only arguments the contract allows
//     (dtype, ops, sizes, leading dimensions, device pointers on their
//     2-byte elements where read, C not A or B), and just the scale where
//     K or alpha is 0;
//   - a call given to one of tcgemm's kernels satisfies that kernel's needs:
//     sizes that fit its 32-bit coordinates, 16-byte aligned bases and rows,
//     and a configuration that is built in;
//   - plan() agrees with gemm() on the status and launches nothing, and its
//     path, backend and kernel configuration agree with each other;
//   - a fused epilogue (a bias or an activation) is accepted only with a bias
//     type and activation the contract names and a bias in device memory,
//     reaches the launch unchanged, and never runs on cuBLAS (which cannot
//     fuse it);
//   - an M-grouped call is accepted only with 1 to 256 groups and their ends
//     in device memory, 4-byte aligned, reaches the launch unchanged, runs on
//     tcgemm's sm90 kernel in one of kGroupedTileConfigs or the sm100
//     single-CTA tiles of kSm100GroupedWidths (or the K == 0 scale), never on
//     cuBLAS.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "api/c_abi_args.hpp"
#include "common/host/device.hpp"
#include "dispatch/cublas_fallback.hpp"
#include "reference/reference.hpp"
#include "sm100/sm100_gemm.hpp"
#include "sm90/sm90_gemm.hpp"
#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"

namespace {

// The fake device address space: "device memory" is [kDeviceBase, +kDeviceSize).
constexpr uintptr_t kDeviceBase = 0x7e0000000000ull;
constexpr uintptr_t kDeviceSize = uintptr_t{1} << 40;

bool is_device(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  return v >= kDeviceBase && v < kDeviceBase + kDeviceSize;
}

struct Recorder {
  int launches = 0;
  const char* what = "";
  tcgemm::GemmArgs args;
};
Recorder g_rec;
tcgemm::detail::DeviceInfo g_device;  // id < 0: no device

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "api_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

void record(const char* what, const tcgemm::GemmArgs& a) {
  ++g_rec.launches;
  g_rec.what = what;
  g_rec.args = a;
}

// What one of tcgemm's kernels needs of a call it is given.
void check_kernel_args(const char* family, const tcgemm::GemmArgs& g) {
  constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
  if (g.m < 1 || g.n < 1 || g.k < 1 || g.m > kMax32 || g.n > kMax32 || g.k > kMax32)
    fail(family, "kernel given sizes outside [1, 2^31-1]");
  for (const void* p : {g.a, g.b, static_cast<const void*>(g.c)})
    if (!is_device(p) || reinterpret_cast<uintptr_t>(p) % 16 != 0) fail(family, "kernel given a bad pointer");
  for (int64_t ld : {g.lda, g.ldb, g.ldc})
    if (ld < 1 || ld % 8 != 0 || ld > (int64_t{1} << 39)) fail(family, "kernel given a leading dimension TMA cannot take");
  // A batch: 32-bit batch indices, strides TMA can take (a multiple of 16
  // bytes below 2^40; 0 repeats A or B), C's matrices apart.
  if (g.batch < 1 || g.batch > kMax32) fail(family, "kernel given a batch outside [1, 2^31-1]");
  // An M-grouped call: its ends in device memory, B's group stride one TMA can take.
  if (g.groups != 0) {
    if (g.groups < 1 || g.groups > tcgemm::kMaxGroups || g.batch != 1 || g.op_a != tcgemm::Op::N)
      fail(family, "kernel given groups it is not built for");
    if (!is_device(g.group_ends) || reinterpret_cast<uintptr_t>(g.group_ends) % 4 != 0)
      fail(family, "kernel given group ends it cannot read");
    if (g.groups > 1 && (g.stride_b < 0 || g.stride_b % 8 != 0 || g.stride_b >= (int64_t{1} << 39)))
      fail(family, "kernel given a group stride TMA cannot take");
  }
  if (g.batch > 1) {
    for (int64_t s : {g.stride_a, g.stride_b, g.stride_c})
      if (s < 0 || s % 8 != 0 || s >= (int64_t{1} << 39)) fail(family, "kernel given a batch stride TMA cannot take");
    const bool stacked = g.stride_c >= (g.m - 1) * g.ldc + g.n;
    const bool side_by_side = g.stride_c >= g.n && (g.batch - 1) * g.stride_c + g.n <= g.ldc;
    if (!stacked && !side_by_side) fail(family, "kernel given overlapping C matrices");
  }
}

}  // namespace

// ---- the recorder: everything that would touch a GPU ----------------------
namespace tcgemm::detail {
const DeviceInfo* current_device(std::string* error, Status* status) {
  if (status != nullptr) *status = Status::no_device;
  if (g_device.id < 0) {
    *error = "no CUDA device is visible (api_fuzz)";
    return nullptr;
  }
  return &g_device;
}
std::string check_device_pointer(const char* name, const void* ptr, int) {
  if (!is_device(ptr)) return std::string(name) + " is host memory (not device memory)";
  return {};
}
std::string check_stream(cudaStream_t, int) { return {}; }
void* driver_entry_point(const char*, int) { return nullptr; }  // no driver here
std::string cublas_gemm(const GemmArgs& g) {
  record("cublas", g);
  return {};
}
cudaError_t launch_reference_gemm(const GemmArgs& g) {
  record("reference", g);
  return cudaSuccess;
}
cudaError_t launch_scale(const GemmArgs& g) {
  record("scale", g);
  return cudaSuccess;
}
cudaError_t probe_kernel_image() { return cudaSuccess; }
}  // namespace tcgemm::detail

namespace tcgemm::sm90 {
std::string run_f16(const GemmArgs& g, const Config& c, int* grid_ctas) {
  check_kernel_args("sm90", g);
  if (!is_tile_config(c.block_n, c.cluster_m, c.pingpong, c.block_m, c.cluster_n, c.swap_ab) || c.num_ctas < 1)
    fail("sm90", "bad config " + describe(c));
  if (!builds_for_layout(c.block_m, c.block_n, g.op_a == Op::N, g.op_b == Op::T, c.swap_ab))
    fail("sm90", "config " + describe(c) + " is not built for the call's layout");
  if (g.grouped() && (grouped_tile_config(c.block_n, c.block_m, c.pingpong) == nullptr || c.cluster_m != 1 ||
                      c.cluster_n != 1 || grouped_tile_config(c.block_n, c.block_m, c.pingpong)->pingpong != c.pingpong))
    fail("sm90", "an M-grouped call given " + describe(c) + ", not one of kGroupedTileConfigs");
  record("sm90", g);
  *grid_ctas = c.num_ctas;
  return {};
}
std::string run_bf16(const GemmArgs& g, const Config& c, int* grid_ctas) { return run_f16(g, c, grid_ctas); }
}  // namespace tcgemm::sm90

namespace tcgemm::sm100 {
std::string run_f16(const GemmArgs& g, const Config& c, int* grid_ctas) {
  check_kernel_args("sm100", g);
  if (!is_tile_config(c.block_n, c.schedule, c.cluster_m, c.cta_rows()) ||
      c.stages != (g.grouped() ? grouped_stages_for(c.block_n) : stages_for(c.block_n, c.cluster_m, c.cta_rows())) ||
      c.grid_clusters < 1 || c.num_tiles < c.grid_clusters)
    fail("sm100", "bad config " + describe(c));
  if (g.grouped() && (c.cluster_m != 1 || c.schedule != Schedule::persistent ||
                      (c.block_n != 128 && c.block_n != 256) || c.stages != grouped_stages_for(c.block_n)))
    fail("sm100", "an M-grouped call given " + describe(c) + ", not a single-CTA tile of kSm100GroupedWidths");
  record("sm100", g);
  *grid_ctas = c.grid_clusters * c.cluster_m;
  return {};
}
std::string run_bf16(const GemmArgs& g, const Config& c, int* grid_ctas) { return run_f16(g, c, grid_ctas); }
}  // namespace tcgemm::sm100

// ---- the fuzz target --------------------------------------------------------
namespace {

int64_t draw_size(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return in.ConsumeIntegralInRange<int64_t>(0, 300);
    case 1: return in.ConsumeIntegralInRange<int64_t>(0, 70000);
    case 2: {
      const int64_t edges[] = {0, 1, -1, 127, 128, 129, (int64_t{1} << 31) - 1, int64_t{1} << 31, (int64_t{1} << 32) + 1,
                               std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
      return edges[in.ConsumeIntegralInRange<size_t>(0, std::size(edges) - 1)];
    }
    default: return in.ConsumeIntegral<int64_t>();
  }
}

// Wrapping addition: near INT64_MAX the harness's own arithmetic must not be
// the undefined behaviour UBSan reports.
int64_t wrap_add(int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); }

int64_t draw_ld(FuzzedDataProvider& in, int64_t row_length) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return row_length;
    case 1: return wrap_add(row_length, in.ConsumeIntegralInRange<int64_t>(-3, 40));
    case 2: return wrap_add(wrap_add(row_length, 7) / 8 * 8, 8 * in.ConsumeIntegralInRange<int64_t>(0, 4));
    default: return in.ConsumeIntegral<int64_t>();
  }
}

const void* draw_pointer(FuzzedDataProvider& in, const void* host) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: return nullptr;
    case 1: return host;
    case 2: return reinterpret_cast<const void*>(kDeviceBase + 16 * in.ConsumeIntegralInRange<uintptr_t>(0, 1 << 20));
    case 3: return reinterpret_cast<const void*>(kDeviceBase + in.ConsumeIntegralInRange<uintptr_t>(0, 1 << 24));
    default: return reinterpret_cast<const void*>(in.ConsumeIntegral<uintptr_t>());
  }
}

// A batch count: small, around 2^31, or anything.
int64_t draw_batch(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: return in.ConsumeIntegralInRange<int64_t>(1, 40);
    case 1: {
      const int64_t edges[] = {0, 1, 2, -1, (int64_t{1} << 31) - 1, int64_t{1} << 31, (int64_t{1} << 30) + 1,
                               std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
      return edges[in.ConsumeIntegralInRange<size_t>(0, std::size(edges) - 1)];
    }
    default: return in.ConsumeIntegral<int64_t>();
  }
}

// A batch stride for matrices of `span` elements: 0 (repeated), the span
// itself or rounded to 8 elements, a little more or less, or anything.
int64_t draw_stride(FuzzedDataProvider& in, int64_t span) {
  switch (in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: return 0;
    case 1: return span;
    case 2: return wrap_add(wrap_add(span, 7) / 8 * 8, 8 * in.ConsumeIntegralInRange<int64_t>(0, 4));
    case 3: return wrap_add(span, in.ConsumeIntegralInRange<int64_t>(-9, 9));
    default: return in.ConsumeIntegral<int64_t>();
  }
}

// Wrapping multiplication, for the harness's own spans near INT64_MAX.
int64_t wrap_mul(int64_t x, int64_t y) { return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); }

int draw_enum(FuzzedDataProvider& in) {
  return in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(0, 1) : in.ConsumeIntegral<int>();
}

void set_device(FuzzedDataProvider& in) {
  g_device = tcgemm::detail::DeviceInfo{};
  switch (in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: case 1: g_device = {0, 9, 0, 132, "H200 (api_fuzz)", cudaSuccess}; break;
    case 2: case 3: g_device = {0, 10, 0, 148, "B200 (api_fuzz)", cudaSuccess}; break;
    case 4: g_device = {0, 8, 0, 108, "A100 (api_fuzz)", cudaSuccess}; break;
    // A GPU this build holds no code for: every call that would run is refused.
    case 5: g_device = {0, 12, 0, 84, "no code (api_fuzz)", cudaErrorNoKernelImageForDevice}; break;
    default: g_device.id = -1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  set_device(in);
  const int dtype = draw_enum(in), op_a = draw_enum(in), op_b = draw_enum(in);
  const int64_t m = draw_size(in), n = draw_size(in), k = draw_size(in);
  const int64_t a_row = op_a == 1 ? m : k, b_row = op_b == 1 ? k : n;
  const int64_t lda = draw_ld(in, a_row), ldb = draw_ld(in, b_row), ldc = draw_ld(in, n);
  int host_memory[4] = {};
  const void* a = draw_pointer(in, host_memory);
  const void* b = draw_pointer(in, host_memory);
  void* c = const_cast<void*>(draw_pointer(in, host_memory));
  const float alpha = in.ConsumeFloatingPoint<float>(), beta = in.ConsumeFloatingPoint<float>();
  void* stream = in.ConsumeBool() ? nullptr : reinterpret_cast<void*>(in.ConsumeIntegral<uintptr_t>());
  // The batched entry point half the time, else the fused epilogue's on some
  // inputs (drawn last: the plain draws above keep their meaning).
  const bool batched = in.ConsumeBool();
  int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
  if (batched) {
    batch = draw_batch(in);
    stride_a = draw_stride(in, wrap_mul(op_a == 1 ? k : m, lda));
    stride_b = draw_stride(in, wrap_mul(op_b == 1 ? n : k, ldb));
    stride_c = draw_stride(in, wrap_mul(m, ldc));
  }
  const bool epilogue = !batched && in.ConsumeBool();
  // Else the M-grouped entry point on some inputs (its A is op N: op_a is not passed).
  const bool grouped = !batched && !epilogue && in.ConsumeBool();
  int64_t groups = 0;
  const int32_t* ends = nullptr;
  if (grouped) {
    groups = in.ConsumeBool() ? in.ConsumeIntegralInRange<int64_t>(-2, 300) : draw_batch(in);
    ends = static_cast<const int32_t*>(draw_pointer(in, host_memory));
    stride_b = draw_stride(in, wrap_mul(op_b == 1 ? n : k, ldb));
  }
  const void* bias = epilogue && in.ConsumeBool() ? draw_pointer(in, host_memory) : nullptr;
  const int bias_type = epilogue ? draw_enum(in) : 0;
  const int activation =
      !epilogue ? 0 : in.ConsumeBool() ? in.ConsumeIntegralInRange<int>(0, 4) : in.ConsumeIntegral<int>();
  const bool fused = bias != nullptr || activation != 0;
  // A and B are read only with K > 0 and alpha != 0 (else C = beta * C, as in BLAS).
  const bool reads = k > 0 && alpha != 0.0f;

  g_rec = Recorder{};
  const int rc = grouped    ? tcgemm_gemm_m_grouped(dtype, op_b, m, n, k, alpha, a, lda, b, ldb, stride_b, beta, c, ldc,
                                                    ends, groups, stream)
                 : batched  ? tcgemm_gemm_strided_batched(dtype, op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                                          stride_b, beta, c, ldc, stride_c, batch, stream)
                 : epilogue ? tcgemm_gemm_epilogue(dtype, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                                                   bias, bias_type, activation, stream)
                            : tcgemm_gemm(dtype, op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
  const std::string call = "dtype=" + std::to_string(dtype) + " ops=" + std::to_string(op_a) + "," +
                           std::to_string(op_b) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
                           " k=" + std::to_string(k) + " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
                           " ldc=" + std::to_string(ldc) +
                           (batched ? " batch=" + std::to_string(batch) + " strides=" + std::to_string(stride_a) +
                                          "," + std::to_string(stride_b) + "," + std::to_string(stride_c)
                                    : std::string()) +
                           (grouped ? " groups=" + std::to_string(groups) + " stride_b=" + std::to_string(stride_b) +
                                          " ends " + std::to_string(reinterpret_cast<uintptr_t>(ends))
                                    : std::string()) +
                           (epilogue ? " bias " + std::string(bias ? "set" : "null") + " bias_type=" +
                                           std::to_string(bias_type) + " activation=" + std::to_string(activation)
                                     : std::string()) +
                           " device cc " + std::to_string(g_device.cc_major) + " -> rc " + std::to_string(rc);
  if (rc < 0 || rc > 4) fail("status out of range", call);
  if (rc != 0) {
    if (std::strlen(tcgemm_last_error()) == 0) fail("a rejection without a reason", call);
    if (g_rec.launches != 0) fail("a rejected call launched", call + " (" + g_rec.what + ")");
  } else {
    // Accepted: the contract's arguments only.
    if (grouped && (groups < 1 || groups > tcgemm::kMaxGroups || stride_b < 0))
      fail("accepted groups outside the contract", call);
    if ((dtype != 0 && dtype != 1) || (!grouped && op_a != 0 && op_a != 1) || (op_b != 0 && op_b != 1) || m < 0 || n < 0 ||
        k < 0 || batch < 0 || (batch > 1 && (stride_a < 0 || stride_b < 0 || stride_c < 0)))
      fail("accepted arguments outside the contract", call);
    if (m == 0 || n == 0 || batch == 0) {
      if (g_rec.launches != 0) fail("launched for an empty product", call);
    } else {
      if (g_device.id < 0 || g_device.image != cudaSuccess)
        fail("accepted a call with no device, or on one this build holds no code for", call);
      if (g_rec.launches != 1) fail("an accepted call did not launch exactly once", call);
      const tcgemm::GemmArgs& r = g_rec.args;
      if (r.m != m || r.n != n || r.k != k || r.a != a || r.b != b || r.c != c || r.lda != lda || r.ldb != ldb ||
          r.ldc != ldc || r.batch != batch || r.stride_a != stride_a || r.stride_b != stride_b ||
          r.stride_c != stride_c || r.groups != groups || r.group_ends != ends ||
          (grouped && r.op_a != tcgemm::Op::N))
        fail("the launch got other arguments than the call", call);
      if (grouped && (std::strcmp(g_rec.what, "cublas") == 0 || !is_device(ends)))
        fail("an M-grouped call ran on cuBLAS or with ends it cannot read", call + " (" + g_rec.what + ")");
      if (batch > 1 && stride_c < (m - 1) * ldc + n && !(stride_c >= n && (batch - 1) * stride_c + n <= ldc))
        fail("accepted a batch whose C matrices overlap", call);
      if (ldc < std::max<int64_t>(1, n) || !is_device(c) || reinterpret_cast<uintptr_t>(c) % 2 != 0)
        fail("accepted a C it cannot write", call);
      if (reads && (lda < std::max<int64_t>(1, grouped ? k : a_row) || ldb < std::max<int64_t>(1, b_row) ||
                    !is_device(a) || !is_device(b) || reinterpret_cast<uintptr_t>(a) % 2 != 0 ||
                    reinterpret_cast<uintptr_t>(b) % 2 != 0))
        fail("accepted an A or B it cannot read", call);
      if (reads && (c == a || c == b)) fail("accepted a C that is also A or B (an in-place product)", call);
      if (!reads && std::strcmp(g_rec.what, "scale") != 0)
        fail("K or alpha is 0 and the call did not just scale C", call + " (" + g_rec.what + ")");
      if (r.bias != bias || static_cast<int>(r.activation) != activation ||
          (bias != nullptr && static_cast<int>(r.bias_type) != bias_type))
        fail("the launch got another epilogue than the call", call);
      if (fused && std::strcmp(g_rec.what, "cublas") == 0) fail("a fused epilogue ran on cuBLAS", call);
      if (bias != nullptr && !is_device(bias)) fail("accepted a bias it cannot read", call);
    }
    if (activation < 0 || activation > 4 || (bias != nullptr && bias_type != 0 && bias_type != 1))
      fail("accepted an epilogue outside the contract", call);
  }
  // plan() decides the same and launches nothing.
  tcgemm::GemmArgs g =
      grouped ? tcgemm::detail::c_abi_m_grouped_args(dtype, op_b, m, n, k, alpha, a, lda, b, ldb, stride_b, beta, c,
                                                     ldc, ends, groups, stream)
              : tcgemm::detail::c_abi_strided_batched_args(dtype, op_a, op_b, m, n, k, alpha, a, lda, stride_a, b, ldb,
                                                           stride_b, beta, c, ldc, stride_c, batch, stream);
  g.bias = bias;
  g.bias_type = static_cast<tcgemm::BiasType>(bias_type);
  g.activation = static_cast<tcgemm::Activation>(activation);
  // (The grouped entry point refuses 0 groups itself: in GemmArgs, 0 groups is a plain call.)
  if (grouped && groups == 0) {
    if (rc == 0) fail("the grouped entry point accepted 0 groups", call);
    return 0;
  }
  const int before = g_rec.launches;
  const tcgemm::Plan p = tcgemm::plan(g);
  if (g_rec.launches != before) fail("plan() launched", call);
  if (static_cast<int>(p.status) != rc) fail("plan() and gemm() disagree", call + " plan " + p.reason);
  if (p.status != tcgemm::Status::ok && p.reason.empty()) fail("a plan rejection without a reason", call);
  // Its structured fields agree with each other: a kernel path for exactly
  // the kernel families' backends, a configuration for exactly that path.
  if (p.status == tcgemm::Status::ok) {
    const bool own = p.backend == tcgemm::Backend::sm90 || p.backend == tcgemm::Backend::sm100;
    if ((p.path == tcgemm::Path::kernel) != own) fail("plan path and backend disagree", call + " " + p.kernel);
    if ((p.path == tcgemm::Path::kernel) != (p.config.block_n > 0 && p.config.stages > 0))
      fail("a plan configuration without the kernel path, or the reverse", call + " " + p.kernel);
    if ((p.path == tcgemm::Path::scale) != (m > 0 && n > 0 && batch > 0 && !reads))
      fail("the scale path off K == 0 or alpha == 0", call);
    if ((p.path == tcgemm::Path::cublas) != (p.backend == tcgemm::Backend::cublas))
      fail("plan path and backend disagree", call + " " + p.kernel);
    if (p.path == tcgemm::Path::cublas &&
        p.kernel != (batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx"))
      fail("a cuBLAS plan names another cuBLAS function than its batch calls", call + " " + p.kernel);
  }
  return 0;
}
