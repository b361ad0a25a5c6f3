// tcgemm — tensor-core GEMM for Hopper (sm_90a) and Blackwell (sm_100a).
//
//   C = alpha * op(A) @ op(B) + beta * C
//
// (with a fused bias and activation, and for a strided batch of independent
// products: GemmArgs).
//
// A, B and C are all fp16 or all bf16, stored row-major (as in PyTorch) with a
// leading dimension (elements between consecutive rows). In tcgemm's kernels
// accumulation is fp32, K in order, 16 products per tensor-core step, one
// rounding to the output type at the end: results are deterministic and do not
// depend on M, N or on the tile configuration chosen. There is no split-K.
// (Calls that fall back to cuBLAS get cuBLAS's numbers: see Backend.)
//
// op(X) = X (Op::N) or X^T (Op::T). A T operand is stored row-major in its
// transposed shape: for op_a = T, A is stored as a K x M matrix.
//
//   op_a = N: A is M x K, lda >= K        op_a = T: A is K x M, lda >= M
//   op_b = N: B is K x N, ldb >= N        op_b = T: B is N x K, ldb >= K
//   C is M x N, ldc >= N
//
// A, B and C must be device (or managed) memory of the current device, each
// on its 2-byte elements' boundaries; host memory, pinned or not, and another
// device's memory are rejected. C must not share memory with A, B or the bias
// (no in-place products): such a call is rejected wherever that is cheap to
// tell (always for one matrix each whose rows are equally far apart, as in
// place; for a large batch as far as a bounded search reaches), and its
// result is undefined otherwise.
//
// Calls never throw. A rejected call returns a status and a reason and writes
// nothing to C. Degenerate shapes are handled before any launch:
//   M == 0 or N == 0      -> nothing to do, success, C untouched
//   K == 0 or alpha == 0  -> C = beta * C (with a fused epilogue act(bias) +
//                            beta * C); A and B are not read, as in BLAS, so
//                            they may be null and NaN in them does not reach C,
//                            nor does alpha (an infinite one at K == 0)
// As in BLAS, when beta == 0 C is never read, so it may hold NaN or garbage.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

// The C++ API's symbols name the layout of its structs: everything below is in
// the inline namespace tcgemm::TCGEMM_ABI_NAMESPACE, which code never names
// (tcgemm::GemmArgs, tcgemm::gemm). When a struct's fields or a function's
// signature change, it takes the next number, so a program built with other
// headers fails to load (an undefined symbol) instead of handing the library
// structs of another layout. The C ABI (tcgemm.h) is plain C and keeps its
// symbols. tests/host/test_api.cpp holds the layouts this number stands for.
#define TCGEMM_ABI_NAMESPACE abi_1

namespace tcgemm {
inline namespace TCGEMM_ABI_NAMESPACE {

enum class DType : int { f16 = 0, bf16 = 1 };
enum class Op : int { N = 0, T = 1 };

// The activation of the fused epilogue (GemmArgs::activation), applied in
// fp32 to alpha * op(A) op(B) + bias, before beta * C is added and the sum is
// rounded once. The formulas are torch.nn.functional's.
enum class Activation : int {
  none = 0,
  relu = 1,       // max(x, 0); NaN stays NaN
  gelu = 2,       // x / 2 * (1 + erf(x / sqrt(2))), within 4.2 * 2^-24 * (|x| + |gelu(x)|) for finite x
  gelu_tanh = 3,  // x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))): gelu(approximate="tanh")
  silu = 4,       // x / (1 + exp(-x))
};

// The element type of a bias vector: the call's dtype (fp16 or bf16), or fp32.
enum class BiasType : int { same = 0, f32 = 1 };

enum class Status : int {
  ok = 0,
  invalid_argument = 1,  // a null pointer, a negative size or one past 2^31-1, a bad leading dimension, ...
  unsupported = 2,       // no kernel and no fallback for this device or request
  no_device = 3,         // no usable CUDA device: none visible, its properties or context unavailable
  cuda_error = 4,        // a CUDA, driver or cuBLAS call (or a host allocation) failed
};

// Which implementation ran (or would run) a call, and so what numbers it
// gives. tcgemm's own code (sm90, sm100, and none's K == 0 scale) rounds an
// fp32 sum once, and every output element meets the element-wise bound
//
//   |c - ref| <= (1 + u) gamma_{K+1} (|alpha| sum_k |a_ik| |b_kj| + |beta| |c_ij|) + u |ref| + eta
//
// where ref is the exact result, gamma_n = n 2^-24 / (1 - n 2^-24) covers the
// fp32 sum, u (2^-11 fp16, 2^-8 bf16) the one rounding to the output type and
// eta (half the type's smallest subnormal) that rounding in the subnormal
// range. `tcgemm check` and its fuzzer hold every element to it against a
// float64 reference. The cuBLAS fallback gives cuBLAS's numbers, which on some
// paths (e.g. N == 1 with beta != 0) round alpha * op(A) @ op(B) to fp16/bf16
// before adding beta * C: an extra rounding, up to u |alpha| sum_k |a_ik| |b_kj|,
// that can put elements where beta * C cancels most of alpha * A @ B many ulps
// outside the bound. Plan::backend and Plan::reason say when a call falls back;
// Prefer::tcgemm_only refuses it instead.
enum class Backend : int {
  none = 0,       // nothing to launch (M, N == 0) or a scale-only kernel (K or alpha == 0)
  sm90 = 1,       // tcgemm's Hopper kernel (wgmma + TMA, persistent)
  cublas = 2,     // the cuBLAS fallback (cuBLAS's numerics, see above)
  sm100 = 3,      // tcgemm's Blackwell kernel (tcgen05 + tensor memory + TMA, 2-SM clusters)
};

// How a kernel hands out tiles. `persistent`: a grid of as many CTAs (or
// clusters) as fit at once, each walking a fixed sequence of tiles.
// `cluster_launch_control`: the grid covers every tile and clusters that
// finish early cancel not-yet-started clusters and take their tiles
// (Blackwell's Cluster Launch Control; sm_100 only). `counted`: the
// persistent grid, each CTA taking the next tile in order from a counter in
// the library's device memory (sm_90's 128-row tiles without a cluster,
// unswapped, not M-grouped; other tiles stay persistent), so that the tiles
// in flight stay together: a long walk of small tiles (a strided batch of
// store-bound products) reads its operands about once. A call being
// captured into a CUDA graph gets a counter of its own: two executable
// graphs made from one capture must not run at the same time (as with a
// cuBLAS workspace in a graph). The bits are the same under every schedule.
enum class Schedule : int { automatic = 0, persistent = 1, cluster_launch_control = 2, counted = 3 };

// What a call does, one step finer than Backend (whose `none` covers both a
// call with nothing to compute and the scale of K or alpha == 0).
enum class Path : int {
  none = 0,    // nothing runs: M or N is 0 (or the call is rejected)
  scale = 1,   // K or alpha == 0: C = beta * C by tcgemm's scale kernel (Backend::none), whatever Prefer
  kernel = 2,  // tcgemm's GEMM kernel of Plan::backend's family (sm90, sm100)
  cublas = 3,  // the cuBLAS fallback (Backend::cublas)
};

// What to prefer. `automatic` takes tcgemm's kernel where it can and cuBLAS
// otherwise; `tcgemm_only` fails instead of falling back; `cublas_only` always
// uses cuBLAS (the baseline that `tcgemm bench` compares against).
enum class Prefer : int { automatic = 0, tcgemm_only = 1, cublas_only = 2 };

struct GemmArgs {
  DType dtype = DType::f16;
  Op op_a = Op::N;
  Op op_b = Op::N;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  float beta = 0.0f;
  void* c = nullptr;
  int64_t ldc = 0;
  // null: the default stream; else a stream of the current device (one of
  // another device is refused: invalid_argument).
  cudaStream_t stream = nullptr;
  // The fused epilogue: C = act(alpha * op(A) op(B) + bias) + beta * C, in
  // fp32, rounded once. bias: N elements on the device (bias_type), added to
  // every row; null for none. activation: none leaves the plain GEMM.
  const void* bias = nullptr;
  BiasType bias_type = BiasType::same;
  Activation activation = Activation::none;

  // Strided batched GEMM: `batch` independent products
  //   C_i = act(alpha * op(A_i) op(B_i) + bias) + beta * C_i,  i = 0 .. batch-1,
  // with A_i = A + i * stride_a elements (B_i, C_i likewise), every C_i M x N
  // with ldc, every A_i and B_i shaped and stored as A and B above, one bias
  // for all. A stride of 0 for A or B uses one matrix for every batch; C's
  // matrices must not overlap (stacked: stride_c >= (M - 1) * ldc + N, or
  // side by side in C's rows: N <= stride_c and (batch - 1) * stride_c + N <=
  // ldc). One launch covers the whole batch. batch = 1 ignores the strides:
  // the plain call; batch = 0 writes nothing (as M or N = 0).
  int64_t batch = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;

  // M-grouped GEMM (a mixture of experts: tokens sorted by expert, one
  // weight matrix per expert): groups > 0 splits the M rows of A and C into
  // `groups` consecutive groups, group g taking the rows
  // [g == 0 ? 0 : group_ends[g - 1], group_ends[g]) with its own
  // B_g = B + g * stride_b elements (each stored as B above; stride_b 0 uses
  // one B for every group):
  //   C[rows of g] = alpha * A[rows of g] @ op(B_g) + beta * C[rows of g].
  // group_ends: `groups` int32 values in device memory, nondecreasing, read by
  // the kernel on the device (never copied to the host, so a call can be
  // captured in a CUDA graph while an earlier kernel of the stream computes
  // them). There each is clamped into [0, M]; ends that still decrease
  // somewhere make the call write nothing at all (the error cannot be
  // reported from the device). Rows at or past the last end are not written.
  // Every row is computed as in a plain call of its group (the same bits).
  // 1 <= groups <= 256 (kMaxGroups), A stored K-major (op_a = N), batch 1, no
  // fused epilogue; tcgemm's kernels only (sm90: kGroupedTileConfigs; sm100:
  // the single-CTA tiles 128 and 256 wide), no cuBLAS fallback.
  // groups = 0: a plain call (group_ends ignored).
  const int32_t* group_ends = nullptr;
  int64_t groups = 0;

  // Whether the call has a fused epilogue (a bias or an activation).
  bool fused_epilogue() const { return bias != nullptr || activation != Activation::none; }
  // Whether the call is M-grouped (groups > 0).
  bool grouped() const { return groups > 0; }
};

// The most groups an M-grouped call may have (GemmArgs::groups).
inline constexpr int kMaxGroups = 256;

// The tile widths (BLOCK_N) the sm90 kernel is built for, narrowest first:
// 8-48 only with 64- and 8-row tiles; 112 with 128- and 256-row tiles; 144
// and 160 with 128-row tiles and swapped; 136, 152, 176, 200, 208 and 224
// only swapped (kTileConfigs).
inline constexpr int kTileWidths[] = {8,   16,  32,  40,  48,  64,  96,  112, 128, 136,
                                      144, 152, 160, 176, 192, 200, 208, 224, 256};

// The sm90 kernel configurations built in: a tile width, the number of CTAs
// (1 or 2, stacked along M) in a cluster that shares B by TMA multicast, the
// consumer schedule: cooperative (both consumer warpgroups on one tile, 64
// rows each) or ping-pong (alternate tiles, one's epilogue overlapping the
// other's mainloop), and the tile height: 128 rows (two consumer warpgroups)
// or 64 (one; the small-M configurations: many narrow tiles over a deep ring,
// so that a few rows of A against a large B still keep every SM streaming B),
// or 256 (the tall tiles, 64 to 128 wide: two consumer warpgroups of 128 rows
// each, one block-row for 129-256 rows of C, so that each column of a wide B
// is read once, not once per 128 rows), or 8 (the decode tiles, 8 to 64 wide, for A and B stored K-major only:
// op_a = N, op_b = T; 8 rows of A per k-block and 4 k-blocks per ring stage,
// so that a stage carries four k-blocks of B at once: block_k 256).
// Widths of whole 16-column panels are built for both layouts of B; 8 and 40
// for B stored K-major only (op_b = T: the nn.Linear layout `x @ W^T`):
// tile_width_builds_mn_major_b (for the unswapped tiles; the swapped
// kernel's width counts A's rows, and B is loaded either way). 40, 48 and 96
// split N = 4608, 6144 and 12288 over one wave of 116-128 SMs; the 128-row
// 96, 112, 144 and 160 cut N into fuller waves where 64, 128, 192 and 256
// leave SMs idle (1536, 3584, 4608 and 10240 at four block-rows).
//
// cluster_n = 2: two CTAs side by side along N in a cluster that shares A by
// TMA multicast (each loads half of A's k-block for both), for the 128-row
// tiles 64 and 96 wide, where A is the larger share of a stage's bytes (2/3
// at 64 wide). Built and selectable, not chosen automatically: on the H200
// they measured slower than the same tile alone (docs/PERF.md).
//
// swap_ab: the kernel computes C^T = op(B)^T op(A)^T, so B's rows (a weight's
// N) fill wgmma's 64-row M side and A's rows (the tokens) its N side, which
// comes in steps of 8: a tile is 128 of C's columns by block_n of its rows,
// stored transposed. For 129-640 rows of C against a wide B (one to four
// tiles of tokens), where the 64- and 128-row steps of the other tiles
// compute up to 63 or 127 rows past the tokens (384 rows for 257:
// docs/PERF.md, "Swap-AB"), and for mid-size products of more rows, where one wave of its tiles fits better than the
// other tiles' waves (docs/PERF.md, "Mid-size products"); its widths cut
// those token counts finely (300 tokens in two tiles of 152, 200 in one of 200,
// 520 in four of 136). 128 rows (two consumers), or 256 (136-160 wide: two m64
// accumulators a consumer, 4 stages with one panel buffer a consumer),
// where 256 rows of N halve the waves of 128-row tiles (docs/PERF.md,
// "Swap-AB, tall"); no cluster, no ping-pong, for A stored K-major (op_a =
// N, the tokens: the swap's wgmma B operand) with B either way, chosen
// automatically for both (with op_b = N its MN-major operand, B^T, is
// loaded in whole 64-column panels: docs/PERF.md, "Swap-AB with B stored K
// x N").
struct TileConfig {
  int block_n;
  int cluster_m;
  bool pingpong = false;
  int block_m = 128;
  int cluster_n = 1;
  bool swap_ab = false;
};
// Whether tiles `block_n` wide are built for B stored MN-major (op_b = N):
// B's k-block is then loaded in panels of 64, 32 or 16 columns, so the width
// must be whole 16-column panels.
constexpr bool tile_width_builds_mn_major_b(int block_n) { return block_n % 16 == 0; }
inline constexpr TileConfig kTileConfigs[] = {
    {64, 1},           {128, 1},           {128, 1, true},     {128, 2},           {192, 1},
    {256, 1},          {256, 2},           {8, 1, false, 64},  {16, 1, false, 64}, {32, 1, false, 64},
    {40, 1, false, 64}, {48, 1, false, 64}, {64, 1, false, 64}, {96, 1, false, 64}, {128, 1, false, 64},
    {256, 1, false, 64}, {96, 1},         {112, 1},          {144, 1},          {160, 1},
    {8, 1, false, 8},  {16, 1, false, 8}, {32, 1, false, 8}, {40, 1, false, 8}, {48, 1, false, 8},
    {64, 1, false, 8},  {64, 1, false, 128, 2}, {96, 1, false, 128, 2}, {64, 1, false, 256},
    {96, 1, false, 256}, {112, 1, false, 256}, {128, 1, false, 256}, {136, 1, false, 128, 1, true},
    {144, 1, false, 128, 1, true}, {152, 1, false, 128, 1, true}, {160, 1, false, 128, 1, true},
    {176, 1, false, 128, 1, true}, {200, 1, false, 128, 1, true}, {208, 1, false, 128, 1, true},
    {224, 1, false, 128, 1, true}, {136, 1, false, 256, 1, true}, {144, 1, false, 256, 1, true},
    {152, 1, false, 256, 1, true}, {160, 1, false, 256, 1, true}};

// The sm90 configurations built for M-grouped calls (GemmArgs::groups):
// ping-pong 128 x 128 (chosen for many rows a group), 128 x 256 (33 to 128
// rows a group on average, where its tiles make several waves), and the
// 64-row tile 128 wide (at most 32 rows a group on average: decoding
// through a mixture of experts, where each expert's weights are the cost).
// Options::block_n, cluster_m (0 or 1), block_m and pingpong pick one of
// them (0 / false: automatic).
inline constexpr TileConfig kGroupedTileConfigs[] = {{128, 1, true}, {256, 1}, {128, 1, false, 64}};

// The sm100 kernel configurations built in. A pair tile is one 256 x block_n
// MMA over a 2-CTA cluster (128 rows per CTA, each CTA loading its rows of A
// and half of B's block_n columns); a single tile (cta_group 1, the small-M
// configurations: decoding, and small problems) is one 128 x block_n MMA in
// one CTA, or one 64 x block_n MMA (cta_rows 64: M <= 64, where a 128-row
// tile would hold twice the rows of A there are, and a tcgen05 MMA of 64
// rows takes widths in steps of 8 from 8). The schedule says how clusters
// get their tiles. The single-CTA widths follow the sm90 family's 64-row
// ones: 40, 48 and 96 put N = 4608, 6144 and 12288 (at M <= 128; 40, built
// 64 rows high only, at M <= 64) on one wave of 116-128 tiles over a
// B200's 148 SMs instead of 72-96 tiles 64 or 128 wide, and 8 spreads a small N over 8 times its 8-column blocks of CTAs
// (the narrower tile's gain carried over from the sm90 measurements, not
// measured on sm100). Tiles whose CTA loads whole 64-column panels of B are
// built for both layouts of B; 8, 16, 32, 40, 48 and 96 wide for B stored
// K-major only (op_b = T, the nn.Linear layout): sm100_tile_builds_mn_major_b.
//
// swap_ab: the swapped single-CTA tiles, as sm90's (TileConfig::swap_ab): the
// kernel computes C^T = op(B)^T op(A)^T, one 128 x block_n MMA a tile with
// 128 of C's columns (a weight's rows) on the MMA's M side and block_n of
// C's rows (the tokens) on its N side, which tcgen05 takes in steps of 16 at
// M = 128 (144-224: sm90's widths that are multiples of 16). For A stored
// K-major (op_a = N), B either way; each epilogue thread holds one of C's
// columns and stores it down the tile's rows, two columns a store. Built and
// forceable (Options::swap_ab), not chosen automatically: never measured on
// a B200.
struct Sm100TileConfig {
  int block_n;
  Schedule schedule;
  int cta_group = 2;
  int cta_rows = 128;  // rows of C per CTA: 128, or 64 (single-CTA tiles: a tcgen05 MMA of M = 64)
  bool swap_ab = false;
};
// Whether the sm100 tiles `block_n` wide over `cta_group` CTAs are built for
// B stored MN-major (op_b = N): each CTA loads its block_n / cta_group
// columns of B's k-block in 64-column panels (128-byte swizzle), so its share
// must be whole panels. (The unswapped tiles: the swapped ones take B either
// way, as their A, and need A K-major instead.)
constexpr bool sm100_tile_builds_mn_major_b(int block_n, int cta_group) { return (block_n / cta_group) % 64 == 0; }
inline constexpr Sm100TileConfig kSm100TileConfigs[] = {{256, Schedule::cluster_launch_control},
                                                        {256, Schedule::persistent},
                                                        {128, Schedule::cluster_launch_control},
                                                        {128, Schedule::persistent},
                                                        {16, Schedule::persistent, 1},
                                                        {32, Schedule::persistent, 1},
                                                        {48, Schedule::persistent, 1},
                                                        {64, Schedule::persistent, 1},
                                                        {96, Schedule::persistent, 1},
                                                        {128, Schedule::persistent, 1},
                                                        {256, Schedule::persistent, 1},
                                                        {8, Schedule::persistent, 1, 64},
                                                        {16, Schedule::persistent, 1, 64},
                                                        {32, Schedule::persistent, 1, 64},
                                                        {40, Schedule::persistent, 1, 64},
                                                        {48, Schedule::persistent, 1, 64},
                                                        {64, Schedule::persistent, 1, 64},
                                                        {96, Schedule::persistent, 1, 64},
                                                        {128, Schedule::persistent, 1, 64},
                                                        {256, Schedule::persistent, 1, 64},
                                                        {144, Schedule::persistent, 1, 128, true},
                                                        {160, Schedule::persistent, 1, 128, true},
                                                        {176, Schedule::persistent, 1, 128, true},
                                                        {208, Schedule::persistent, 1, 128, true},
                                                        {224, Schedule::persistent, 1, 128, true}};
// The sm100 tiles built for M-grouped calls (GemmArgs::groups): the
// single-CTA tiles of these widths, persistent, both layouts of B.
inline constexpr int kSm100GroupedWidths[] = {128, 256};

struct Options {
  Prefer prefer = Prefer::automatic;
  // Configuration override for the sm90 kernel: 0 chooses automatically; a
  // non-zero (block_n, cluster_m, pingpong, block_m, cluster_n, swap_ab) must
  // be one of kTileConfigs (block_n alone picks that width, the rest chosen
  // automatically; a width built only swapped, 136, 152, 176, 200, 208 or 224,
  // with swap_ab). Results are bit-identical for every choice (tests rely
  // on it).
  int block_n = 0;
  int cluster_m = 0;
  bool pingpong = false;  // with block_n and cluster_m: the ping-pong variant
  // sm100: block_n is 0 or a width of kSm100TileConfigs; cluster_m 0
  // (automatic), 2 (pair tiles) or 1 (single-CTA tiles, persistent); pingpong
  // false. `schedule` picks persistent or Cluster Launch Control there; on
  // sm90 persistent or counted (automatic: counted for long strided batches
  // of store-bound products on a GPU with less than 56 MiB of L2, such as the
  // H100, docs/DESIGN.md "Counted tiles", else persistent).
  Schedule schedule = Schedule::automatic;
  // The tile height, 0 (automatic) or: sm90 8, 64, 128 or 256 (see
  // kTileConfigs; 8, the decode tile, needs op_a = N and op_b = T); sm100
  // 256 (pair tiles), 128 or 64 (single-CTA tiles of that many rows:
  // Sm100TileConfig::cta_rows).
  int block_m = 0;
  // Programmatic dependent launch (sm90, sm100 kernels): the kernel may start
  // while the stream's previous kernel finishes, so its launch and prologue
  // (barrier setup) overlap that kernel's tail; it waits for that kernel to
  // complete before it reads or writes any operand. It also lets the next
  // kernel launched this way start during its own tail. The results are the
  // same either way; false launches it as an ordinary kernel.
  bool pdl = true;
  // sm90: CTAs per cluster side by side along N, sharing A by TMA multicast:
  // 0 (automatic), 1, or 2 with a block_n of a kTileConfigs entry whose
  // cluster_n is 2 (cluster_m then 0 or 1). 0 on sm100.
  int cluster_n = 0;
  // sm90: the swapped kernel (TileConfig::swap_ab), with block_m 0 or 128
  // (or 256, the tall swapped tiles) and block_n (the rows of C a tile
  // covers) 0 or a width of a kTileConfigs entry with swap_ab of that
  // height; for op_a = N only. false: automatic where nothing else is forced.
  // sm100: the swapped single-CTA tiles (Sm100TileConfig::swap_ab), block_n 0
  // or one of their widths, block_m 0 or 128, cluster_m 0 or 1, persistent;
  // for op_a = N only; chosen only when forced.
  bool swap_ab = false;
  // The SMs a call of tcgemm's kernels may take: its persistent grid has at
  // most this many CTAs, and the configuration is chosen for that many SMs
  // (as cuBLASLt's SM count target). For a GEMM that runs while other
  // kernels, communication ones say, need SMs of their own: a persistent
  // kernel on every SM would keep them waiting until it ends. 0 (or more
  // than the device has): all of them. Fewer SMs than a cluster forced by
  // the options (cluster_m, sm100's pair tiles) is refused. With it set,
  // sm100's automatic schedule is persistent (single-CTA tiles on one SM);
  // Cluster Launch Control (a CTA a tile) cannot be bounded and is refused
  // with it. The cuBLAS fallback (and the scale kernel of K or alpha == 0)
  // is not bounded by it.
  int sm_count = 0;
};

// The configuration tcgemm's kernel runs a call with (Plan::config). Every
// configuration gives the same bits; this says which one, and so what speed.
struct KernelConfig {
  int block_m = 0;    // rows of C per tile: 128, 256, 64 or 8 on sm90 (one CTA); sm100 256 (one MMA over 2 CTAs), 128 or 64 (one CTA)
  int block_n = 0;    // columns of C per tile: kTileWidths (sm90), kSm100TileConfigs (sm100)
  int block_k = 0;    // K per stage of the operand ring (64; 256 for sm90's 8-row tiles)
  int stages = 0;     // depth of the shared-memory operand ring
  int cluster_m = 0;  // CTAs per cluster, stacked along M: sm90 1, or 2 sharing B by TMA
                      // multicast (Options::cluster_m); sm100 2 (the pair one MMA spans) or 1
                      // (the single-CTA small-M tiles)
  bool pingpong = false;  // sm90: the consumer warpgroups alternate tiles instead of sharing one
  Schedule schedule = Schedule::automatic;  // how tiles reach CTAs: persistent, counted (sm90) or
                                            // cluster_launch_control (sm100)
  int cluster_n = 0;  // sm90: CTAs per cluster side by side along N, 1, or 2 sharing A by TMA
                      // multicast (Options::cluster_n); sm100 1
  bool swap_ab = false;  // the kernel computes C^T (TileConfig::swap_ab, Sm100TileConfig::swap_ab):
                         // block_m counts C's columns and block_n its rows
};

// The plan for a call: which backend and kernel, and why.
struct Plan {
  Status status = Status::ok;
  Backend backend = Backend::none;
  std::string kernel;  // e.g. "sm90_gemm_persistent<f16,NT,128x256x64, 4 stages>": a name for
                       // messages, made from backend, config and the call's dtype and layout
  std::string reason;  // why this backend (or why the call is rejected); "fallback: ..." names
                       // what kept tcgemm's kernel from the call, which then has cuBLAS's numerics
  int grid_ctas = 0;   // CTAs tcgemm's kernel was launched with (set by gemm(), not plan())
  Path path = Path::none;  // what runs (Path::none also for a rejected call: see status)
  KernelConfig config;     // when path == Path::kernel; all zero otherwise
};

// Decides what gemm() would do with these arguments, without launching.
Plan plan(const GemmArgs& args, const Options& options = {}) noexcept;

// Runs C = alpha*op(A)@op(B) + beta*C, asynchronously on args.stream.
// On failure the returned Plan's status is not ok and its reason says why.
Plan gemm(const GemmArgs& args, const Options& options = {}) noexcept;

// A simple, obviously correct GPU GEMM (one thread per output, fp32
// accumulation one product at a time in K order), for verification. Same
// arguments and validation as gemm(); any layout, any base on its 2-byte
// elements (no 16-byte alignment needed).
Plan reference_gemm(const GemmArgs& args) noexcept;

// Names for messages and tables.
const char* to_string(DType dtype) noexcept;
const char* to_string(Op op) noexcept;
const char* to_string(Status status) noexcept;
const char* to_string(Backend backend) noexcept;
const char* to_string(Path path) noexcept;
const char* to_string(Activation activation) noexcept;
const char* to_string(Schedule schedule) noexcept;

// Version and build information.
struct BuildInfo {
  const char* version;        // "1.0.0"
  const char* cuda_archs;     // architectures compiled in, e.g. "sm_90a"
  const char* kernel_families;  // as `tcgemm info` prints them: "sm90_gemm_persistent (wgmma + TMA, ...); .."
  int cuda_runtime_version;   // CUDART_VERSION at build time
};
BuildInfo build_info() noexcept;

}  // inline namespace TCGEMM_ABI_NAMESPACE
}  // namespace tcgemm
