#include "sm90/sm90_config.hpp"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <tuple>

#include "common/m_groups.hpp"

namespace tcgemm::sm90 {

static_assert(stages_for(256) >= 4 && stages_for(192) >= 4,
              "wide tiles need a ring of at least 4 stages to hide TMA latency");
static_assert(stages_for(128) >= 6 && stages_for(64) >= 6, "narrow tiles consume stages faster: at least 6");
static_assert(stages_for(8, kSmallBlockM) >= 16 && stages_for(64, kSmallBlockM) >= 12,
              "the small-M tiles stream B: a deep ring of small stages");
static_assert(stages_for(64, kDecodeBlockM) >= 6 && stages_for(8, kDecodeBlockM) >= 16,
              "the decode tile: the consumer holds two stages, at least four more load");

namespace {

// Block-rows per raster group (Config::group_m; common/tile_order.hpp); the
// 2-CTA clusters along M walk groups of half as many cluster block-rows.
constexpr int kRasterGroupM = 8;

// A strided batch of products bound by their stores of C, not by their
// operands: a short K (a tile's few k-blocks take less time than its
// stores) and each problem's B small enough to stay in L2 while every
// block-row reads all of it. There the 128-row tiles walk each problem
// row-major (groups of one block-row) instead of in groups of 8 block-rows.
// Measured, not derived (H100, bf16, interleaved rounds, docs/PERF.md "The
// raster of store-bound batches"): 128 x 2048 x 2048 x 128 4.6-5.9% faster
// in one run and 5.3% (NN) / 0.9% (NT) in another, 32 x 2048^2 x 128 NT 4.4%,
// 128 x 512^2 x 128 1.5-2.1%. Not for single products: on 8192 x 8192 x 64,
// 16384 x 4096 x 128 and 32768 x 2048 x 256 the same walk ran -1.3% to +1.1%;
// nor past K = 256: at K = 512 and 1024 (B of 2-16 MB) it ran 8-12% slower, and
// with B of 40 and 128 MB (4096 x 5120 x 4096, 8192^3) 15% and 26%.
constexpr int64_t kRowRasterMaxK = 256;
constexpr int64_t kRowRasterMaxBBytes = int64_t{8} << 20;

// Counted tiles (Schedule::counted) for a store-bound batch where the walk
// is long: at least this many tiles per SM. Measured, not derived (H100,
// bf16, ping-pong 128 x 128, 3 interleaved rounds, docs/PERF.md "Counted
// tiles"): 128 x 2048^2 x 128 (248 tiles an SM) 10.7% faster, 128 x 1024^2
// x 128 and 32 x 2048^2 x 128 (62) 7.7% and 5.1%; 128 x 512^2 x 128 (15.5)
// 3.4-4.6% slower: a short walk drifts little and pays the counter's
// hand-off (a consumer learns its tile only when the tile's first stage has
// landed).
constexpr int64_t kCountedMinTilesPerSm = 32;
// And only on a GPU whose L2 is under kCountedMaxL2Bytes (sm90_config.hpp).

// Whether a batch is one of the store-bound batches above.
bool store_bound_batch(int64_t n, int64_t k, int64_t batch) {
  return batch > 1 && k <= kRowRasterMaxK && n * k * 2 <= kRowRasterMaxBBytes;
}

// The raster group of a chosen configuration: one block-row (of clusters)
// for the store-bound batches above, else kRasterGroupM's. Not for the tall
// tiles (tall_grid's grid is laid out for their groups), the swapped kernel
// or the 64- and 8-row tiles, where it was not measured.
int raster_group(const Config& c, int64_t n, int64_t k, int64_t batch) {
  return c.block_m == kBlockM && !c.swap_ab && store_bound_batch(n, k, batch) ? 1 : c.group_m;
}

// Relative throughput of a full wave of tiles of each width: narrower tiles
// lose to operand bandwidth (shared memory and L2 bytes per FLOP grow as
// 1/128 + 1/BLOCK_N) and to per-tile overhead (epilogue, pipeline fill).
// The widths between whole panels (96, 112, 144, 160): measured at M = 512
// (`bench --configs all`, three layers at K = 4096, docs/PERF.md), each
// width's speed over its wave efficiency, against the 256-wide tile's, was
// 0.92 (96), 0.94 (112), 0.96 (144) and 0.97 (160), within 0.02-0.05 from
// layer to layer; interpolating by the byte cost per FLOP (0.85-0.94) had
// underrated them, so that the ping-pong 128x128 in 5.2 waves was picked
// over 128x112 in 6 full ones (512x22016x4096: 0.91x cuBLAS against 0.97x).
// Set a little under those means.
double tile_width_factor(int block_n, bool b_k_major) {
  // An MN-major B narrower than whole 64-column panels is loaded and read
  // in panels of the widest of 32 or 16 columns that divides the tile (64-
  // or 32-byte swizzle: common/smem_layout.hpp, mn_panel_cols): 144 and 112
  // wide in nine and seven 16-column panels. Measured (bf16 NN against NT,
  // the same shapes, `bench --configs all`, docs/PERF.md, "Mid-size
  // products"): 0.55x the K-major B's speed in 16-column panels, in
  // 32-column ones 0.78x at 96 wide and 0.93x at 160 (at 512 x 10240 x 8192,
  // 0.95x: 160 stays ahead of ping-pong 128 x 128 there, 119 against 133 us).
  // 112 wide is now held in whole 64-column panels (pads_mn_b), 1.4-1.6x as
  // fast as in 16-column panels, but its factor stays: at 0.95 the NN picks
  // it took (128 x 112 on 10 shapes of 129-3000 rows) ran 0.71-1.00x the
  // picks they replaced, geomean 0.905 (H100, docs/PERF.md, part 27).
  const int panel = detail::mn_panel_cols(block_n);
  const double mn = b_k_major ? 1.0 : panel == 16 ? 0.55 : block_n == 96 ? 0.8 : panel == 32 ? 0.93 : 1.0;
  switch (block_n) {
    case 256: return 1.0;
    case 192: return 0.97;
    case 160: return 0.96 * mn;
    case 144: return 0.95 * mn;
    case 128: return 0.9;
    case 112: return 0.93 * mn;
    case 96: return 0.90 * mn;
    default: return 0.75 * mn;
  }
}

// Ping-pong 128x128 against the cooperative tiles: it hides each tile's
// epilogue behind the other consumer's mainloop, so it gains most where the
// epilogue is a large share of a tile's time, i.e. at short K (measured on
// the H200: 1.11-1.14x of the cooperative 128x256 at K = 1024, 1.01-1.02x at
// K = 4096-8192, even at K = 12288). Its consumers alternate tiles, so below
// two tiles per CTA one of them idles: not a candidate there.
double pingpong_factor(int64_t k) { return 0.99 + 0.12 * 1024.0 / static_cast<double>(k > 1024 ? k : 1024); }

// The time of `tiles` 64-row tiles `block_n` wide on `num_sms` SMs where
// streaming B (M <= 64) is the whole cost, in units of one column of B's
// rows at one saturated CTA's rate. Wave by wave (one tile per SM): each CTA
// streams at a rate proportional to its width up to 60 columns (~0.66 GB/s a
// column, levelling near 40 GB/s: the measurements of small_m_width below),
// and HBM bounds the wave at about 0.74 SMs' worth of saturated streams
// (on the H200, 3.9 TB/s over 132 SMs x 40 GB/s). Fitted to `bench --configs all` on the
// llm suite's layers at M = 1-64 (docs/PERF.md), with L2 flushed by a write
// and by a read.
double stream_time(int64_t tiles, int block_n, int num_sms) {
  constexpr double kSaturatedColumns = 60.0, kHbmShareOfSms = 0.74;
  const double hbm = kHbmShareOfSms * num_sms * kSaturatedColumns;
  double time = 0.0;
  for (int64_t left = tiles; left > 0; left -= num_sms) {
    const double ctas = static_cast<double>(left < num_sms ? left : num_sms);
    time += ctas * block_n / std::min(hbm, ctas * std::min(static_cast<double>(block_n), kSaturatedColumns));
  }
  return time;
}

// The 64-row tiles' width for an M <= 64 call, where B's bytes are the whole
// cost. Measured on the H200 (docs/PERF.md): a CTA's stream of B grows with
// its tile's width up to 64 columns (each stage of the ring costs about the
// same time whatever its width: ~0.66 GB/s per column) and levels off near
// 40 GB/s beyond, so a call takes about as long as its number of waves of
// tiles until HBM's bandwidth bounds it. So: the fewest waves; among equals
// the narrower tile (more SMs share the stream): 48 wide puts N = 6144 on
// 128 SMs (1.02-1.03x the 64-wide tiles on 96), 96 wide N = 12288 (1.03-1.06x
// the 128-wide on 96). Except where 64-wide tiles
// make 4 waves or more: then HBM bounds every wave but the last, and the
// widths of 64 columns or more that fill the last wave best win: 64 wide
// beat the fewer, wider waves by 6-9% at 57344 x 8192 (6.8 waves, 97% full),
// 96 wide the 64 by 3.6-7.8% at 37888 x 3584 (3 waves, 99.7% full, against
// 4.5 waves, 90%) (`bench --configs all`, docs/PERF.md).
//
// An MN-major B in panels narrower than 64 columns streams more slowly (its
// TMA boxes read rows of 32 or 64 bytes: 48 and 16 wide measured 0.77-0.83x
// and 0.69-0.78x the 64-wide tile's speed at M = 1-64, 32 wide 0.77-0.98x), so for B
// MN-major the widths of whole 64-column panels only, unless `latency_bound`
// (the small problems below, whose B is a few KiB: there more CTAs win).
//
// block_m: the height whose widths are candidates, 64, or 8 where the decode
// tile is forced (Options::block_m = 8) without a width.
//
// The fewest waves can be one partial wave that leaves SMs idle: N = 22016
// makes 86 tiles 256 wide, one wave on 86 of 132 SMs, against 230 tiles 96
// wide on all 132 in 1.7 waves. Whether that loses depends on what bounds
// the stream, so the 64-row tiles' choice is checked against a model of it
// (stream_time) and replaced where the model says another width is more than
// 3% faster.
int small_m_width(int64_t m, int64_t n, int num_sms, bool b_k_major, int64_t batch, bool latency_bound,
                  int block_m = kSmallBlockM) {
  const auto candidate = [&](int block_n) {
    return builds_for_b(block_n, b_k_major) && (b_k_major || latency_bound || block_n % 64 == 0);
  };
  // (A batch's problems are walked as one grid: its block-rows count as more rows.)
  const int64_t m_blocks = ceil_div(m, block_m) * batch;
  if (m_blocks * ceil_div(n, 64) >= 4 * static_cast<int64_t>(num_sms)) {
    int width = 64;
    double fill = detail::wave_efficiency(m_blocks * ceil_div(n, 64), num_sms);
    for (const TileConfig tc : kTileConfigs) {
      if (tc.block_m != block_m || tc.block_n <= 64 || !candidate(tc.block_n)) continue;
      const double f = detail::wave_efficiency(m_blocks * ceil_div(n, tc.block_n), num_sms);
      if (f > fill + 0.01) {  // (widths ascend: a tie keeps the narrower)
        width = tc.block_n;
        fill = f;
      }
    }
    return width;
  }
  // The fewest waves (then the narrowest), and the stream model's fastest.
  int best_width = 0, fastest = 0;
  int64_t best_waves = 0;
  double best_time = 0.0, fastest_time = 0.0;
  for (const TileConfig tc : kTileConfigs) {
    if (tc.block_m != block_m || !candidate(tc.block_n)) continue;
    const int64_t tiles = m_blocks * ceil_div(n, tc.block_n);
    const int64_t waves = ceil_div(tiles, num_sms);
    const double time = stream_time(tiles, tc.block_n, num_sms);
    if (best_width == 0 || waves < best_waves || (waves == best_waves && tc.block_n < best_width)) {
      best_width = tc.block_n;
      best_waves = waves;
      best_time = time;
    }
    if (fastest == 0 || time < fastest_time) {
      fastest = tc.block_n;
      fastest_time = time;
    }
  }
  if (latency_bound || block_m != kSmallBlockM) return best_width;
  return fastest_time < 0.97 * best_time ? fastest : best_width;
}

// Whether block_n has no unswapped 128-row tile: it exists only as a 64-row
// tile, or only swapped (136, 152, 176, 200, 208, 224).
bool small_m_only(int block_n) { return is_tile_width(block_n) && !is_tile_config(block_n, 1, false, kBlockM); }

// The tiles of block_m x block_n that a batch of M x N problems makes.
int64_t grid_tiles(int64_t m, int64_t n, int block_m, int block_n, int64_t batch) {
  return ceil_div(m, block_m) * static_cast<int64_t>(ceil_div(n, block_n)) * batch;
}

// Tiles block_m x block_n without a cluster or ping-pong (the 64-, 8- and
// 256-row tiles): the ring they are built with, persistent, one CTA per tile
// up to the SMs.
Config single_cta_config(int64_t m, int64_t n, int num_sms, int block_m, int block_n, int64_t batch) {
  Config c{};
  c.block_m = block_m;
  c.block_n = block_n;
  c.block_k = stage_block_k(block_m);
  c.stages = stages_for(block_n, block_m);
  c.cluster_m = 1;
  c.cluster_n = 1;
  c.pingpong = false;
  c.schedule = Schedule::persistent;
  c.group_m = kRasterGroupM;
  const int64_t tiles = grid_tiles(m, n, block_m, block_n, batch);
  c.num_ctas = static_cast<int>(tiles < num_sms ? tiles : num_sms);
  return c;
}

// A 64-row tile, or (block_m = 8) the decode tile: the width asked for where
// built for the layout, else small_m_width's.
Config small_m_config(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& r,
                      bool latency_bound = false, int block_m = kSmallBlockM) {
  const int width = is_tile_config(r.block_n, 1, false, block_m) && builds_for_b(r.block_n, r.b_k_major)
                        ? r.block_n
                        : small_m_width(m, n, num_sms, r.b_k_major, r.batch, latency_bound, block_m);
  Config c = single_cta_config(m, n, num_sms, block_m, width, r.batch);
  if (latency_bound && !r.fused && has_shallow_ring(c.block_n, block_m) && ceil_div(k, kBlockK) <= kShallowStages)
    c.stages = kShallowStages;
  return c;
}

// Whether the call leaves the whole choice to select_config: no height,
// width, cluster or ping-pong asked for.
bool is_automatic(const ConfigRequest& r) {
  return r.block_m == 0 && r.block_n == 0 && r.cluster_m == 0 && r.cluster_n == 0 && !r.pingpong && !r.swap_ab;
}

// The decode tile in place of the 64-row tile `c` of an automatic choice:
// M <= 8 (one 8-row block-row), A and B K-major, and c's width built as a
// decode tile, at most 48. A TMA probe (docs/PERF.md, "a TMA stream probe")
// streamed W's rows 1.3-1.5x faster with 2-4 k-blocks per stage than with
// one, which the 64-row tiles cannot afford (A's 8 KiB a k-block leave too
// few stages) and the 8-row tile's 1 KiB of A can. Measured on the decode
// layers at M = 1, 4, 8 (bf16 NT, docs/PERF.md): 1-3% faster than the
// 64-row tile at widths 32, 40 and 48 (4096x4096 17.6 -> 17.0 us), far less
// than the probe; at 64 wide (6 stages of 4 k-blocks) 0-1% slower, so not
// picked there.
bool takes_decode_tile(int64_t m, const ConfigRequest& r, const Config& c) {
  return is_automatic(r) && m <= kDecodeBlockM && c.block_m == kSmallBlockM && c.block_n <= 48 &&
         is_tile_config(c.block_n, 1, false, kDecodeBlockM) &&
         builds_for_layout(kDecodeBlockM, c.block_n, r.a_k_major, r.b_k_major);
}

// The decode tile, at its own width, in place of the 64-row tile `c` of an
// automatic choice for 8 < M <= 64 (A and B K-major) where c's grid would
// occupy at most half the SMs: N too small for the 64-row tiles to spread B's
// stream (N = 256 makes 32 tiles 8 wide). The 8-row block-rows multiply the
// CTAs (each reads all of B's columns it covers; from L2 after the first),
// and the M <= 64 rule over the decode widths counts them. Measured at
// M x 256 x 2048 (bf16 NT, `bench --configs all`, docs/PERF.md): 8 x 8 on 64
// tiles at M = 16, 8 x 8 on 128 at M = 32 and 8 x 16 on 128 at M = 64 ran
// 10-15% faster than 64 x 8 on 32.
bool takes_decode_grid(int64_t m, int num_sms, const ConfigRequest& r, const Config& c) {
  return is_automatic(r) && m > kDecodeBlockM && m <= kSmallBlockM && c.block_m == kSmallBlockM &&
         2 * c.num_ctas <= num_sms && r.a_k_major && r.b_k_major;
}

// The tall tiles (256 rows) against the 128-row ones, fitted to `bench
// --configs all` at 136-512 rows (bf16 NT, docs/PERF.md, "The tall tile"):
// 256 x 112 as a 128-row tile of the same operand bytes per FLOP (128 x
// 200); 256 x 128 under it (its 128 accumulator registers a thread: 5-10%
// slower than 256 x 112 at 160 x 57344 x 8192, 200 x 28672 x 4096 and 400
// x 57344 x 8192 where their waves were as full); 256 x 96 a little under;
// 256 x 64 (a quarter of each stage B's) well under: at 160 x 8192 x 8192
// it took 61.4 us where 128 x 128 on as many tiles took 51.8.
double tall_width_factor(int block_n) {
  switch (block_n) {
    case 128: return 0.93;
    case 112: return 0.97;
    case 96: return 0.96;
    default: return 0.7;
  }
}

// At 129-192 rows of C the tall tile leaves out consumer 1's second
// accumulator (Mma::live_rows): measured 7% faster than at 200 rows on
// 14336 x 4096 (45.3 against 48.8 us), where those wgmmas run. (Not a
// quarter: the stream of B bounds it as much as the tensor cores.)
constexpr double kTallSkipCredit = 1.07;

// The tall tiles' persistent grid, where a CTA takes tiles c, c + grid,
// c + 2 grid, ... (common/tile_order.hpp): one CTA per tile up to the SMs.
// Except where the last block-row leaves accumulators out (Mma::live_rows:
// at most 192 rows there) and its tiles have less work than the others:
// with R block-rows in one raster group (R <= group_m) tile t is on
// block-row t % R, and a grid that R divides (132 SMs: R = 2, 3, 4) gives
// each CTA the tiles of one block-row only, so the CTAs of the full
// block-rows set the time. A grid prime to R rotates each CTA's tiles
// through the block-rows: taken when it is at most two SMs short of the
// full grid, needs no more waves, and makes at least R waves (each CTA then
// gets a light tile). 448 x 14336 x 4096: 256 tiles 256 x 112 on 131 CTAs,
// 82.7 -> 79.0 us (docs/PERF.md, "The tall tile").
int tall_grid(int64_t m, int64_t tiles, int num_sms, int64_t batch, int group_m) {
  const int full = static_cast<int>(tiles < num_sms ? tiles : num_sms);
  const int64_t rows = ceil_div(m, kTallBlockM);
  const int64_t last_rows = m - (rows - 1) * kTallBlockM;
  if (batch != 1 || rows < 2 || rows > group_m || last_rows > kTallBlockM - 64 || tiles <= num_sms) return full;
  int grid = num_sms;
  while (grid > 1 && std::gcd(static_cast<int64_t>(grid), rows) != 1) --grid;
  const int64_t waves = ceil_div(tiles, num_sms);
  if (grid == num_sms || num_sms - grid > 2 || ceil_div(tiles, grid) != waves || waves < rows) return full;
  return grid;
}

// With two block-rows of tall tiles, the last of 129-192 rows (one
// accumulator left out) on a rotated grid (tall_grid), every CTA gets a
// light tile. Fitted to `bench --configs all` at 400-448 rows (3 rounds,
// docs/PERF.md, "The tall tile"): 256 x 112 beat the ping-pong pick by
// 5-14% at 448 x 28672 x 4096, 400 and 448 x 57344 x 8192, 2% at 400 x
// 28672 x 4096; a credit this size takes those and leaves 420 x 37888 x
// 3584 (3% slower on 256 x 128) and 440 x 10240 x 8192 to the 128-row tiles.
constexpr double kTallRotatedCredit = 1.10;

// The best tall tile for M x N: its width (0 if none is built) and score,
// as select_config scores the 128-row widths (wave efficiency x width
// factor x the share of its columns inside N) times its share of rows
// inside M over the 128-row tiles', and a credit for the left-out
// accumulators: at most 192 rows, kTallSkipCredit; two block-rows whose
// last is light on a rotated grid, kTallRotatedCredit.
struct TallChoice {
  int block_n = 0;
  double score = -1.0;
};
TallChoice best_tall(int64_t m, int64_t n, int num_sms, bool b_k_major, int64_t batch) {
  TallChoice best;
  const int64_t rows = ceil_div(m, kTallBlockM);
  const int64_t last_rows = m - (rows - 1) * kTallBlockM;
  // (The credit for two block-rows also needs the width's grid rotated.)
  const bool two_light = rows == 2 && last_rows > kTallBlockM / 2;
  // (The share of the tiles' rows inside M: column_share's arithmetic along M.)
  const double rows_score = detail::column_share(m, kTallBlockM) / detail::column_share(m, kBlockM);
  for (const TileConfig tc : kTileConfigs) {
    // (The 256-row widths 136-160 are built swapped only: swap_fit's.)
    if (tc.block_m != kTallBlockM || tc.swap_ab || !builds_for_b(tc.block_n, b_k_major)) continue;
    const int64_t tiles = rows * batch * ceil_div(n, tc.block_n);
    const bool rotated =
        two_light && tall_grid(m, tiles, num_sms, batch, kRasterGroupM) < std::min<int64_t>(tiles, num_sms);
    const double credit = m <= kTallBlockM - 64 ? kTallSkipCredit : rotated ? kTallRotatedCredit : 1.0;
    const double score = detail::wave_efficiency(tiles, num_sms) * tall_width_factor(tc.block_n) *
                         detail::column_share(n, tc.block_n) * rows_score * credit;
    if (score > best.score) best = TallChoice{tc.block_n, score};
  }
  return best;
}

// A tall tile `block_n` wide (built: is_tile_config) for M x N, on tall_grid's grid.
Config tall_config(int64_t m, int64_t n, int num_sms, int block_n, int64_t batch) {
  Config c = single_cta_config(m, n, num_sms, kTallBlockM, block_n, batch);
  c.num_ctas = tall_grid(m, grid_tiles(m, n, kTallBlockM, block_n, batch), num_sms, batch, c.group_m);
  return c;
}

// The widest swapped width (of the 128-row tiles, the widest there is): the
// most rows of C one token tile of the swapped kernel holds.
constexpr int kWidestSwapWidth = [] {
  int widest = 0;
  for (const TileConfig tc : kTileConfigs)
    if (tc.swap_ab && tc.block_n > widest) widest = tc.block_n;
  return widest;
}();

// The swapped kernel (swap_ab) for M x N: the kernel's tiles are block_m (128
// or 256) of N by block_n of M, so the tokens (M) take wgmma's N side in
// steps of 8. Its width when forced without one: the narrowest swapped width
// of that height that holds M, else the widest.
int swap_width(int64_t m, int block_m) {
  int fits = 0, widest = 0;
  for (const TileConfig tc : kTileConfigs) {
    if (!tc.swap_ab || tc.block_m != block_m) continue;
    if (tc.block_n >= m && (fits == 0 || tc.block_n < fits)) fits = tc.block_n;
    widest = std::max(widest, tc.block_n);
  }
  return fits != 0 ? fits : widest;
}
// The swapped configuration whose tiles finish first: over the widths and
// heights whose grid fills the SMs (swap_fills), the least time on the
// busiest SM, then the fewest rows computed, then the wider. A 128-row
// tile's time is taken as its operand bytes a k-block, 128 rows of B and
// block_n of A (128 + block_n); a 256-row (tall) tile's as 1.9 times that of
// the 128-row tile of its width; the busiest SM's as that times its waves of
// N / block_m by M / block_n tiles.
// On the H200 (bf16 NT, `bench --configs all --only swap_ab`, docs/PERF.md,
// "Swap-AB, fitted") a narrow token tile ran as the byte count predicts, not
// as its FLOPs: a width of 104, tried, in three tiles over 4 waves 12%
// slower than two of 152 over 3 at 300 x 22016 x 4096 (928 against 840 by
// this count; by FLOPs 416 against 456), in two over 7 waves 16% slower
// than one of 200 over 4 at 200 x 57344 x 8192 (1624 against 1312), and 17%
// faster than two of 152 where both make 2 waves (304 x 11008 x 4096). (Not
// built: wherever it would have been chosen the unswapped tiles were
// faster.) A tall tile took 1.86-1.94 times as long as the 128-row tile of
// its width on 9 shapes (docs/PERF.md, "Swap-AB, tall"): it wins where it
// halves the waves (300 x 14336 x 4096: one wave against two, 7% faster)
// and loses where it does not (300 x 57344 x 8192: 4 against 7, 6% slower).
// At one wave this is the narrowest width that holds M in one tile.
struct SwapFit {
  int block_n = 0;  // 0: none fills the SMs
  int block_m = kBlockM;
  int64_t rows = 0;  // M rounded up to whole token tiles
};
// A tall swapped tile's time over the 128-row tile's of the same width, in percent.
constexpr int64_t kTallSwapTimePct = 190;
// The most token tiles of the 128-row swapped kernel (the tall one's are
// not capped): four tiles of 144 ran 4-10% slower than the 128-row tiles at
// 520 x 4096 x 4096 and 540 x 12288 x 4096 while the last token tile's box
// ran 36-56 rows past M, and 3-7% faster once it was cut to the tokens
// there are (docs/PERF.md, "Swap-AB: the last token tile's box cut").
constexpr int64_t kMaxSwapTokenTiles = 4;
// Whether `tiles` of the swapped kernel fill the SMs: 80% of them in every
// wave (N = 14336 makes 112 tiles a token tile, 57344 448; tall, 56 and 224).
bool swap_fills(int64_t tiles, int num_sms) {
  return tiles >= num_sms * 8 / 10 && detail::wave_efficiency(tiles, num_sms) >= 0.8;
}
SwapFit swap_fit(int64_t m, int64_t n, int num_sms, int64_t batch) {
  SwapFit best;
  std::tuple<int64_t, int64_t, int> best_key;  // (busiest, rows, -block_n): the least first
  for (const TileConfig tc : kTileConfigs) {
    if (!tc.swap_ab) continue;
    const int64_t token_tiles = ceil_div(m, tc.block_n);
    if (tc.block_m == kBlockM && token_tiles > kMaxSwapTokenTiles) continue;
    const int64_t tiles = ceil_div(n, tc.block_m) * token_tiles * batch;
    if (!swap_fills(tiles, num_sms) || !detail::tile_count_fits_int32(n, m, tc.block_m, tc.block_n, batch)) continue;
    const int64_t rows = token_tiles * tc.block_n;
    const int64_t tile_time = (kBlockM + tc.block_n) * (tc.block_m == kTallBlockM ? kTallSwapTimePct : 100);
    const std::tuple<int64_t, int64_t, int> key{ceil_div(tiles, num_sms) * tile_time, rows, -tc.block_n};
    if (best.block_n == 0 || key < best_key) {
      best = SwapFit{tc.block_n, tc.block_m, rows};
      best_key = key;
    }
  }
  return best;
}
Config swap_config(int64_t m, int64_t n, int num_sms, const SwapFit& fit, int64_t batch) {
  Config c = single_cta_config(n, m, num_sms, fit.block_m, fit.block_n, batch);  // (the kernel's M is N, its N M)
  c.swap_ab = true;
  return c;
}

// Where the swapped kernel is chosen: A K-major, past one block-row
// of 128, where its tiles (swap_fit's, whose grid fills the SMs) compute
// fewer rows of C than the tiles chosen otherwise (`other_rows`: M rounded
// up to 64 for the tall tile, whose accumulators past M are left out; to
// 128 for the 128-row tiles). One token tile: 129-176 rows (136, 144, 152,
// 160 or 176 against the tall tile's 192) and 193-224 (200, 208 or 224 against
// 256), not 177-192 (200 against 192: 2-4% slower than the tall tile at
// 180-192 x 14336-57344). Two, where the 128-row tiles are
// chosen: 257-320 rows (2 x 136, 144, 152 or 160 against 384). Measured against
// the tile chosen before (bf16 NT, docs/PERF.md, "Swap-AB"): 4-7% faster at
// 136-176 x 14336 x 4096 and 136 x 28672 x 4096, 2-6% at 160 and 200 x
// 57344 x 8192, 200-208 x 14336 x 4096 and 200 x 28672 x 4096, 0-1.5% at
// 209-224 rows, 6-15% at 288 and 320 x 14336 x 4096, 288 x 28672 x 4096 and
// 320 x 57344 x 8192; the widths of 152 and 200 3-10% more at 296-300 rows
// (two tiles of 152 against 160) and 0.4-2.3% at 200 (200 against 208),
// nothing measurable at 150 (152 against 160, bound by W's bytes there);
// 0.8% slower at 176 x 57344 x 8192 (bound by W's 940 MB); at 152 x 4096 x
// 4096 (32 tiles, not taken) 20% slower. B stored either way: with B
// MN-major (op_b = N) the kernel's A, B^T, is MN-major in whole panels,
// and the same rule ran 4-36% faster than the tiles chosen before on 14 of
// 15 NN shapes of 136-576 rows (bf16, docs/PERF.md, "Swap-AB with B stored
// K x N"), 7% slower at 200 x 57344 x 1024. Returns the configuration
// (block_n 0 where it is not taken).
SwapFit swap_choice(int64_t m, int64_t n, int num_sms, const ConfigRequest& r, int64_t other_rows) {
  // (Plain calls only: a strided batch of small products was not measured.)
  if (m <= kBlockM || !r.a_k_major || r.batch != 1) return {};
  const SwapFit fit = swap_fit(m, n, num_sms, r.batch);
  return fit.block_n != 0 && fit.rows < other_rows ? fit : SwapFit{};
}

// Mid-size products: more than 640 rows (past the swapped kernel's and the
// tall tile's rules above), N and K of 1024 or more, a plain call, and one
// to six waves of 128 x 128 tiles (up to about 3000 x 4096). There every
// CTA takes one to six tiles, and the 128-row widths between whole panels
// (96, 112, 144), which the widths' rule picks to fill the last wave, ran
// 0.62-0.87x cuBLAS (2900 x 1024, 2100 x 2048, 2200 x 2048 x 4096, bf16
// NT) where one wave of larger tiles, tall (256 x 96) or swapped (256 x
// 136-144, 128 x 200-224), ran 0.93-1.01x. Every configuration without a
// cluster is a candidate: the 128-row tiles and ping-pong 128 x 128, the
// tall tiles, the 64-row tile 256 wide, and (A K-major) the swapped ones
// at any number of token tiles; each scores as the widths' rule does
// (its wave efficiency times the share of its rows and columns inside M and
// N) times its speed over a full wave, fitted to `bench --configs all` on
// nine shapes of 512-3000 rows at K = 3584-4096 in both layouts of B
// (docs/PERF.md, "Mid-size products"), as a fraction of the 128 x 256
// tile's. 0: not a candidate.
double mid_size_factor(const TileConfig& tc, bool b_k_major, int64_t k) {
  // The factors' K: fitted at 3584-4096 (and taken past it); below, at
  // 1024-3072, the same but for two measured on 24 shapes (docs/PERF.md,
  // "Mid-size products"): ping-pong 128 x 128 ran 1-3% faster than 128 x
  // 256 in as many waves (its epilogues hidden weigh more), and the 64-row
  // tile 2-14% slower than the tile chosen before.
  constexpr int64_t kLongK = 3584;
  if (tc.cluster_m != 1 || tc.cluster_n != 1) return 0.0;
  if (tc.swap_ab) {
    // B MN-major: fitted the same way on the swapped configurations alone
    // (`bench --configs all --only swap_ab`, eight NN shapes of 288-3500
    // rows at K = 3584-8192), each shape's factors scaled by the automatic
    // pick's beside them (docs/PERF.md, "Swap-AB with B stored K x N").
    // There the kernel's A is B^T, stored MN-major and loaded in whole
    // 64-column panels, so its tiles keep their speed, while the unswapped
    // NN widths between whole panels lose theirs (the second factors
    // below). Not below K = 3584: at 1600 x 6144 x 1024 the swapped 256 x
    // 152 ran 10% slower than ping-pong 128 x 128, the one such case
    // measured.
    if (!b_k_major && k < kLongK) return 0.0;
    if (tc.block_m == kTallBlockM) {
      switch (tc.block_n) {
        case 136: return b_k_major ? 0.99 : 0.99;
        case 144: return b_k_major ? 0.92 : 0.99;
        case 152: return b_k_major ? 0.955 : 1.0;
        case 160: return b_k_major ? 0.98 : 1.0;
        default: return 0.0;
      }
    }
    switch (tc.block_n) {
      case 136: return b_k_major ? 0.94 : 0.94;
      case 144: return b_k_major ? 0.91 : 0.95;
      case 152: return b_k_major ? 0.92 : 0.96;
      case 160: return b_k_major ? 0.93 : 0.96;
      case 176: return b_k_major ? 0.96 : 0.965;
      case 200: return b_k_major ? 0.935 : 0.975;
      case 208: return b_k_major ? 0.95 : 0.99;
      case 224: return b_k_major ? 0.98 : 1.0;
      default: return 0.0;
    }
  }
  if (tc.block_m == kTallBlockM) {
    switch (tc.block_n) {
      case 128: return 1.0;
      case 112: return b_k_major ? 0.95 : 0.83;
      case 96: return b_k_major ? 0.91 : 0.89;
      case 64: return b_k_major ? 0.84 : 0.78;
      default: return 0.0;
    }
  }
  // (The 64-row tile 256 wide: two waves of it at 2100 x 2048 and 700 x
  // 6144 ran 0.84-0.88x cuBLAS with B MN-major, the best there; at K of
  // 1024-2048, 2-14% slower than the other tiles.)
  if (tc.block_m == kSmallBlockM) return tc.block_n == 256 && k >= kLongK ? (b_k_major ? 0.81 : 0.83) : 0.0;
  if (tc.block_m != kBlockM) return 0.0;
  if (tc.pingpong) return tc.block_n == 128 ? (k >= kLongK ? 0.97 : 1.02) : 0.0;
  switch (tc.block_n) {
    case 256: return 1.0;
    case 192: return 0.97;
    case 160: return b_k_major ? 0.94 : 0.88;
    case 144: return b_k_major ? 0.905 : 0.51;
    case 128: return 0.955;
    case 112: return b_k_major ? 0.87 : 0.48;
    case 96: return b_k_major ? 0.81 : 0.63;
    case 64: return b_k_major ? 0.62 : 0.65;
    default: return 0.0;
  }
}
// Whether M x N x K is a mid-size product (above). N and K of 1024 or more:
// the narrowest and shortest measured. At least a wave of 128 x 128 tiles:
// fewer go to the small-problem rule's 64-row tiles.
bool is_mid_size(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& r) {
  constexpr int64_t kMidSizeMinRows = 4 * 160, kMidSizeMinN = 1024, kMidSizeMinK = 1024, kMidSizeMaxWaves = 6;
  const int64_t tiles_128 = ceil_div(m, kBlockM) * ceil_div(n, kBlockM);
  return is_automatic(r) && r.batch == 1 && m > kMidSizeMinRows && n >= kMidSizeMinN && k >= kMidSizeMinK &&
         tiles_128 >= num_sms && tiles_128 <= kMidSizeMaxWaves * num_sms;
}
// The best configuration for a mid-size product by mid_size_factor's scores.
Config mid_size_choice(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& r) {
  TileConfig best{};
  double best_score = -1.0;
  for (const TileConfig tc : kTileConfigs) {
    const double factor = mid_size_factor(tc, r.b_k_major, k);
    if (factor == 0.0 || !builds_for_layout(tc.block_m, tc.block_n, r.a_k_major, r.b_k_major, tc.swap_ab)) continue;
    // (The swapped kernel's tiles run along N by block_m, along M by block_n.
    // At most six waves of 128 x 128 tiles: every tile count fits 32 bits.)
    const int64_t rows = tc.swap_ab ? n : m, cols = tc.swap_ab ? m : n;
    const int64_t tiles = ceil_div(rows, tc.block_m) * ceil_div(cols, tc.block_n);
    if (tc.pingpong && tiles < 2 * static_cast<int64_t>(num_sms)) continue;  // (one consumer would idle)
    const double score = detail::wave_efficiency(tiles, num_sms) * detail::column_share(rows, tc.block_m) *
                         detail::column_share(cols, tc.block_n) * factor;
    if (score > best_score) {
      best = tc;
      best_score = score;
    }
  }
  if (best.swap_ab) return swap_config(m, n, num_sms, SwapFit{best.block_n, best.block_m}, 1);
  if (best.block_m == kTallBlockM) return tall_config(m, n, num_sms, best.block_n, 1);
  Config c = single_cta_config(m, n, num_sms, best.block_m, best.block_n, 1);
  c.pingpong = best.pingpong;
  return c;
}

}  // namespace

namespace {

// select_config's choice of tiles, before the raster (raster_group).
Config select_tiles(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& request) {
  if (num_sms < 1) num_sms = 1;
  // The swapped kernel, forced (Options::swap_ab): the width asked for, else
  // swap_width's. (Dispatch refuses it for a layout it is not built for; here
  // that falls through to the unswapped tiles.)
  if (request.swap_ab && request.a_k_major) {
    const int height = request.block_m == kTallBlockM ? kTallBlockM : kBlockM;
    const int width = is_tile_config(request.block_n, 1, false, height, 1, true) ? request.block_n
                                                                                 : swap_width(m, height);
    if (detail::tile_count_fits_int32(n, m, height, width, request.batch))
      return swap_config(m, n, num_sms, SwapFit{width, height}, request.batch);
  }
  // The tile height: forced, implied by a width only 64-row tiles have, or
  // 64 for M <= 64 unless a 128-row option (a cluster, ping-pong) is asked.
  int block_m = request.block_m;
  // The decode tile, forced (Options::block_m = 8): its width as asked, else
  // the M <= 64 rule's among its widths. (Dispatch refuses it for a layout
  // it is not built for; here that falls back to the 64-row tiles.)
  if (block_m == kDecodeBlockM) {
    if (request.a_k_major && request.b_k_major) {
      const Config c = small_m_config(m, n, k, num_sms, request, false, kDecodeBlockM);
      if (detail::tile_count_fits_int32(m, n, c.block_m, c.block_n, request.batch)) return c;
    }
    block_m = kSmallBlockM;
  }
  // The tall tile, forced (Options::block_m = 256): its width as asked, else
  // the best by best_tall's score.
  if (block_m == kTallBlockM) {
    const bool named = is_tile_config(request.block_n, 1, false, kTallBlockM) &&
                       builds_for_b(request.block_n, request.b_k_major);
    const int width = named ? request.block_n : best_tall(m, n, num_sms, request.b_k_major, request.batch).block_n;
    if (width != 0 && detail::tile_count_fits_int32(m, n, kTallBlockM, width, request.batch))
      return tall_config(m, n, num_sms, width, request.batch);
    block_m = kBlockM;
  }
  if (block_m != kSmallBlockM && block_m != kBlockM) {
    const bool wants_128 = request.cluster_m > 1 || request.cluster_n > 1 || request.pingpong;
    const bool width_fits_64 = request.block_n == 0 || is_tile_config(request.block_n, 1, false, kSmallBlockM);
    if (small_m_only(request.block_n) || (m <= kSmallBlockM && !wants_128 && width_fits_64))
      block_m = kSmallBlockM;
    else
      block_m = kBlockM;
  }
  if (block_m == kSmallBlockM) {
    const Config c = small_m_config(m, n, k, num_sms, request);
    // M <= 8, A and B K-major, nothing forced: the decode tile of that width.
    if (takes_decode_tile(m, request, c)) {
      ConfigRequest same_width = request;
      same_width.block_n = c.block_n;
      const Config d = small_m_config(m, n, k, num_sms, same_width, false, kDecodeBlockM);
      if (detail::tile_count_fits_int32(m, n, d.block_m, d.block_n, request.batch)) return d;
    }
    // 8 < M <= 64 on a grid of at most half the SMs: the decode tile's grid.
    if (takes_decode_grid(m, num_sms, request, c)) {
      const Config d = small_m_config(m, n, k, num_sms, request, false, kDecodeBlockM);
      if (detail::tile_count_fits_int32(m, n, d.block_m, d.block_n, request.batch)) return d;
    }
    // (32-bit tile indices: only a forced 64-row tile on a huge C can miss.)
    if (detail::tile_count_fits_int32(m, n, c.block_m, c.block_n, request.batch)) return c;
  }

  // Mid-size products: every configuration by its fitted speed (is_mid_size),
  // ahead of the widths' rule, whose choice they do not use.
  if (is_mid_size(m, n, k, num_sms, request)) return mid_size_choice(m, n, k, num_sms, request);

  // Block-rows over the whole batch: every wave count below counts batch x tiles.
  const int64_t m_blocks = ceil_div(m, kBlockM) * request.batch;
  int block_n = small_m_only(request.block_n) ? 0 : request.block_n;
  bool pingpong = request.pingpong;
  double best = -1.0;  // the chosen width's score (when chosen here)
  if (!is_tile_width(block_n)) {
    // Widest first, so that ties go to the wider tile.
    pingpong = false;
    for (int i = static_cast<int>(std::size(kTileWidths)) - 1; i >= 0; --i) {
      const int w = kTileWidths[i];
      if (small_m_only(w)) continue;
      const int64_t tiles = m_blocks * ceil_div(n, w);
      // The widths between whole 64-column panels (96, 112, 144, 160) are
      // there to fill the last wave where the others leave SMs idle (M =
      // 512: 4608 on 128 tiles of 144 instead of 96 of 192, 1.2x; 10240 on
      // 256 of 160, 1.17x; 1024 x 1536 on 128 of 96, 1.08x; M = 128: 37888
      // on 264 of 144, 1.05x the 64x96 tiles: `bench --configs all`,
      // docs/PERF.md). Candidates from half a wave of tiles up: below, the
      // small-problem rule that follows picks 64-row tiles, as measured.
      if (w % kEpiPanel != 0 && 2 * tiles < num_sms) continue;
      // Scaled by the share of the tiles' columns inside N (1 wherever w
      // divides N, as on every model layer of the suites): N = 16 at M =
      // 10240 on 128x256 tiles measured 2.6x slower than on 128x64 (H200,
      // docs/PERF.md), where every width made the same single column of tiles.
      const double used = detail::column_share(n, w);
      const double score = detail::wave_efficiency(tiles, num_sms) * tile_width_factor(w, request.b_k_major) * used;
      if (score > best) {
        best = score;
        block_n = w;
        pingpong = false;
      }
      if (is_tile_config(w, 1, true) && tiles >= 2 * static_cast<int64_t>(num_sms)) {
        const double pp = detail::wave_efficiency(tiles, num_sms) * pingpong_factor(k) * used;
        if (pp > best) {
          best = pp;
          block_n = w;
          pingpong = true;
        }
      }
    }
  }
  // 2-CTA clusters (B shared by multicast) are built and selectable, but not
  // chosen automatically: on the H200 they measured 0-2% slower than the same
  // tile without a cluster on every shape of the large and matmul_v2 suites
  // (docs/PERF.md): B's L2->SM traffic is not what limits this kernel. Nor
  // are the clusters along N (A shared): 128x64 in pairs took 10.5 us at
  // 1024^3 against 10.0 alone, 128x96 11.9 against 11.0 at 1024x1536x1024.
  int cluster_m = request.cluster_m;
  int cluster_n = request.cluster_n != 0 ? request.cluster_n : 1;
  if (!is_tile_config(block_n, cluster_m, pingpong, kBlockM, cluster_n)) {
    cluster_m = 1;
    if (!is_tile_config(block_n, cluster_m, pingpong, kBlockM, cluster_n)) {
      cluster_n = 1;
      if (!is_tile_config(block_n, cluster_m, pingpong)) pingpong = false;
    }
  }
  // Small problems (matmul_v2's 128^3-512^3): where the 128-row tiles leave
  // half the SMs or more idle, 64-row tiles, each with half the work or less
  // before its first store, at the width of the M <= 64 rule (the fewest
  // waves, the narrowest among equals): 1.01-1.05x the 128-row tile on
  // 128^3, 256^3 and 512^3 at the same width, and the narrower tiles (16 and
  // 32 wide: 16 to 128 CTAs) 1.01-1.05x that (fp16 NN, `bench --configs
  // all`, docs/PERF.md). Not when the call asked for a height, width,
  // cluster or ping-pong.
  const bool automatic = is_automatic(request);
  // One token tile of the swapped kernel, against the tall tile's rows.
  if (automatic && m <= kWidestSwapWidth) {
    if (const SwapFit fit = swap_choice(m, n, num_sms, request, ceil_div(m, kSmallBlockM) * kSmallBlockM);
        fit.block_n != 0)
      return swap_config(m, n, num_sms, fit, request.batch);
  }
  if (automatic && 2 * m_blocks * ceil_div(n, block_n) <= num_sms) {
    const Config c = small_m_config(m, n, k, num_sms, request, /*latency_bound=*/true);
    if (detail::tile_count_fits_int32(m, n, c.block_m, c.block_n, request.batch)) return c;
  }
  // One block-row (64 < M <= 128) where the 128-row choice is 64 wide, or
  // 128 wide in two waves or more: two block-rows of 64-row tiles 96 or 128
  // wide, whichever fills its waves better, scaled by the share of its columns
  // inside N (a tie to the wider). Measured on
  // the H200 at M = 128 (llm shapes, bf16 NT, `bench --configs all`,
  // docs/PERF.md): 64x128 beat 128x64 with the same tile count by 1-5% (N =
  // 8192, 28672 x K 8192), 64x96 beat it by 3-10% where it fills more SMs
  // (N = 6144, 4608); against 128x128 in 2.2-3.4 waves, 64x96 by 8.6% (N =
  // 37888, 6 waves 99.7% full) and 64x128 by 3% (N = 57344, 6.8 waves 97%).
  // Not where the 128-wide tiles make one wave (N = 12288, 10240: 0.96x and
  // 0.88x). B K-major only (the layout measured; nn.Linear's). (Those N are
  // now cut by the widths between whole panels where they fill the waves
  // better, ahead of this rule: 37888 on 128x144 1.05x the 64x96, 57344 on
  // 128x112 1.02x the 64x128, 12288 and 10240 on 128x96 1.02-1.03x the
  // 128x128.)
  //
  // And at any M where N is one column of 128-wide tiles but two of the
  // 64-wide ones the 128-row choice took (64 < N <= 128): the same number of
  // tiles, each covering all of N. Measured at 8192 x 128 x 4096 (bf16 NT,
  // `bench --configs all`, docs/PERF.md): 64x128 0.956x cuBLAS against the
  // 128x64 pick's 0.926x. Not for the store-bound batches (store_bound_batch):
  // at 64 x 128^3 NT the 64x128 tile took 10.0 us against 128x64's 8.7 (H100,
  // docs/PERF.md, part 28).
  //
  // And at more than one block-row where the 128-row choice is 64 wide and K
  // is 4096 or more: the 64-row tiles 96 or 128 wide where they fill the SMs
  // as well as it, or within 3% (they ran 1-16% faster at the same tile
  // count: 1024 x 1024 x 4096, 64x128 19.2 us against 128x64's 22.0; 136 x
  // 4096 x 4096, 64x96 on 129 tiles 19.5 against 22.4; bf16 NT, `bench
  // --configs all`, docs/PERF.md), not where their columns past N would
  // waste more. (Shorter K not measured.)
  const bool narrow_128 = block_n == 64 && !pingpong;
  const bool many_128 = block_n == 128 && m_blocks * static_cast<int64_t>(ceil_div(n, 128)) >= 2 * num_sms;
  const bool one_column = narrow_128 && n > 64 && n <= 128 && !store_bound_batch(n, k, request.batch);
  const bool one_block_row = m_blocks == 1 && m > kSmallBlockM && (narrow_128 || many_128);
  if (automatic && request.b_k_major && (one_block_row || one_column || (narrow_128 && k >= 4096))) {
    const int64_t rows_64 = ceil_div(m, kSmallBlockM) * request.batch;  // block-rows of the 64-row tiles
    int width = 0;
    double fill = -1.0;
    for (const int w : {128, 96}) {
      if (!is_tile_config(w, 1, false, kSmallBlockM)) continue;
      const double f = detail::wave_efficiency(rows_64 * ceil_div(n, w), num_sms) * detail::column_share(n, w);
      if (f > fill) {
        width = w;
        fill = f;
      }
    }
    constexpr double kSmallTileEdge = 1.03;
    const double fill_128x64 =
        detail::wave_efficiency(m_blocks * ceil_div(n, 64), num_sms) * detail::column_share(n, 64);
    if (width != 0 && (one_block_row || one_column || fill * kSmallTileEdge >= fill_128x64)) {
      ConfigRequest wide = request;
      wide.block_n = width;
      const Config c = small_m_config(m, n, k, num_sms, wide);
      if (detail::tile_count_fits_int32(m, n, c.block_m, c.block_n, request.batch)) return c;
    }
  }
  // The tall tile where the 128-row tiles make two to four block-rows and
  // it scores higher than their choice (best_tall). 136-192 x 14336 x 4096
  // took 49-50 us on 256 tiles 128 x 112 (0.89x cuBLAS), each block-row
  // reading all of W and the second computing 128 rows for 8-64, and 45-46
  // us on 128 tiles 256 x 112 (0.97x); 160 x 57344 x 8192 335 us on the
  // ping-pong 128 x 128, 286 on 256 x 112; 512 x 14336 x 4096 87 us against
  // cuBLAS's 94 (bf16 NT, docs/PERF.md, "The tall tile"). (The swapped
  // kernel, taken above where it computes fewer rows, has since beaten it at
  // 129-176 and 193-224 rows of such a B.) B K-major only, the layout it was
  // fitted on: with B MN-major (op_b = N) its widths load B in 16- and
  // 32-column panels, and the choices that replace it (the swapped kernel,
  // whose MN-major operand is loaded in whole 64-column panels, or the
  // 128-row tiles) ran 1.10-1.59x faster on the 12 NN shapes of 180-512
  // rows measured (H100, docs/PERF.md, "The tall tile with B stored K x N"),
  // 1.02x at 176 x 11008 x 2048 and 1.4% slower at 136 x 11008 x 4096 (256 x
  // 96 against 128 x 192).
  const int64_t rows_128 = ceil_div(m, kBlockM);
  // Ahead of the tall tile, two token tiles of the swapped 128 x 200 (385-400
  // rows, 400 against the tall tile's 512), the width with a fifth stage
  // (epi_buffers): faster than 256 x 112 on all 8 shapes of 388-396 x 14336-
  // 57344 x 2048-8192 measured (1-13%) and at 400 x 14336-57344 x 2048-8192
  // (2-18%) (H100, bf16 NT, `bench --configs all`; docs/PERF.md, "NT at 385-400 rows").
  // Not two of 208 (four stages): 3% slower at 416 x 28672 x 2048.
  constexpr int kFiveStageSwapWidth = 200;
  static_assert(stages_for(kFiveStageSwapWidth) == 5, "the rule below is for the swapped width with a fifth stage");
  if (automatic && best >= 0.0 && rows_128 == 4 && m <= 2 * kFiveStageSwapWidth) {
    if (const SwapFit fit = swap_choice(m, n, num_sms, request, rows_128 * kBlockM);
        fit.block_m == kBlockM && fit.block_n == kFiveStageSwapWidth)
      return swap_config(m, n, num_sms, fit, request.batch);
  }
  TallChoice tall;
  if (automatic && best >= 0.0 && rows_128 >= 2 && rows_128 <= 4 && request.b_k_major) {
    tall = best_tall(m, n, num_sms, request.b_k_major, request.batch);
    if (tall.block_n == 0 || tall.score <= best ||
        !detail::tile_count_fits_int32(m, n, kTallBlockM, tall.block_n, request.batch))
      tall = TallChoice{};
  }
  if (tall.block_n != 0) return tall_config(m, n, num_sms, tall.block_n, request.batch);
  // Two token tiles of the swapped kernel (257-320 rows: two of 144, 152 or
  // 160), against the rows the 128-row tiles would compute. (Not against the
  // tall tile: at 400 x 14336 x 4096 the two tied, 77.4 and 76.9 us, before
  // the 128 x 200 had its fifth stage; since, two of 200 go ahead of the tall
  // tile at 385-400 rows, above. Three tiles of 104, tried, ran 3-14% slower than the 128-row tiles at 300-304
  // rows.) Past 320 rows (two to four token tiles, up to 640 rows) only
  // where the 128-row tiles compute at least 10% more rows: at 400-576 rows
  // of N = 8192-57344 (docs/PERF.md, "Swap-AB, more token tiles") faster on
  // 23 of 25 shapes (1-20%), even on one, 5% slower on one (450 x 18944 x
  // 4096). With less to save it lost 2-6% (530-544 x 14336: 600 rows
  // against 640; 600, 620 and 700 x 14336), and two of 176 at 352 x 14336
  // x 4096 1% (352 against 384). Four tiles of the 128-row 144 (513-576
  // rows of N = 3584-28672), once the last one's box of the tokens was cut:
  // 3-11% faster on 20 of 24 cases, -2% to +1% at N = 3584 (docs/PERF.md,
  // "Swap-AB: the last token tile's box cut"). The width of 136 (cuBLAS's
  // at 520 and 257-264 tokens) then 0-8% more on 13 shapes of 129-136,
  // 257-272, 385-408 and 513-544 tokens.
  constexpr int64_t kTwoSwapTilesMax = 2 * 160;
  constexpr int64_t kSwapRowsMax = 4 * 160;
  if (automatic && best >= 0.0 && m > kWidestSwapWidth && m <= kSwapRowsMax) {
    const int64_t rows = rows_128 * kBlockM;
    if (const SwapFit fit = swap_choice(m, n, num_sms, request, rows);
        fit.block_n != 0 && (m <= kTwoSwapTilesMax || 10 * rows >= 11 * fit.rows))
      return swap_config(m, n, num_sms, fit, request.batch);
  }
  Config c{};
  c.block_m = kBlockM;
  c.block_n = block_n;
  c.block_k = kBlockK;
  c.stages = stages_for(block_n);
  c.cluster_m = cluster_m;
  c.cluster_n = cluster_n;
  c.pingpong = pingpong;
  c.schedule = Schedule::persistent;
  c.group_m = kRasterGroupM / cluster_m;
  const int cluster_ctas = cluster_m * cluster_n;
  const int64_t clusters = ceil_div(ceil_div(m, kBlockM), cluster_m) *
                           static_cast<int64_t>(ceil_div(ceil_div(n, block_n), cluster_n)) * request.batch;
  const int64_t max_clusters = num_sms / cluster_ctas > 0 ? num_sms / cluster_ctas : 1;
  c.num_ctas = static_cast<int>((clusters < max_clusters ? clusters : max_clusters) * cluster_ctas);
  return c;
}

}  // namespace

// Large batched problems on a GPU of small L2 (under kCountedMaxL2Bytes):
// 128 x 256 tiles in pairs sharing B, where the ping-pong 128 x 128 was
// chosen, for a batch of problems of at least kPairedBatchMinTiles tiles
// of 128 x 128 each, K of at least kPairedBatchMinK and a walk of at least
// kPairedBatchMinTilesPerSm of them an SM (measured: 31-124). There the ping-pong
// walk's L2 reuse varies from launch to launch (Nsight Compute, 32 x
// 2048^3: 547-1289 MB read from DRAM, 699-857 us; 128 x 256 in pairs
// 752-759 MB, 729-735 us), and the pairs ran 1.15-1.24x faster at 16-64 x
// 2048^3 and 1.10x at 8 x 4096^3; at K = 1024 (32 x 2048^2, 16 x 4096^2)
// and at 144 tiles a problem (32 x 1536^3) the ping-pong tile stayed ahead
// (H100, `bench --configs all`, docs/PERF.md, part 27). Measured, not
// derived; the H200 ran 32 x 2048^3 at 1.03-1.05x cuBLAS on the ping-pong
// tile (part 21), and its L2 leaves it out.
constexpr int64_t kPairedBatchMinTiles = 256;
constexpr int64_t kPairedBatchMinK = 2048;
constexpr int64_t kPairedBatchMinTilesPerSm = 30;

// Store-bound batches (store_bound_batch: K <= 256) whose 128-row tiles at
// least 128 wide make at most one tile an SM: 128 x 64 instead, two tiles or
// more a CTA, so that the producer loads the next tile's k-blocks while the
// consumers store the tile before (with one tile a CTA nothing overlaps its
// epilogue). Measured (H100, bf16, `bench --configs all`, 3 interleaved
// rounds, docs/PERF.md, part 28), the pick -> 128 x 64, us: 128 x 128^3
// 11.5 -> 11.3 (NN), 11.9 -> 11.2 (NT); 128 x 128^2 x 256 14.9 -> 14.4,
// 15.6 -> 14.6; 64 x 256^2 x 128 (128 x 256) 13.1 -> 12.1, 13.2 -> 12.0; 16
// x 512^2 x 128 (128 x 256) 11.3 -> 11.1, 11.6 -> 10.8; 32 x 256^2 x 128
// 9.5 -> 9.3, 9.7 -> 9.5; within 3% either way at 8 x 512^2 x 128, 32 x
// 256^3 and 64 x 128 x 256 x 128. The plain epilogue only: the fused one
// was not measured here.
namespace {

bool takes_narrow_batch_tile(const Config& c, int64_t m, int64_t n, int64_t k, int num_sms,
                             const ConfigRequest& request) {
  return is_automatic(request) && request.schedule == Schedule::automatic && !request.fused &&
         c.block_m == kBlockM && c.block_n >= 128 && !c.swap_ab && c.cluster_m * c.cluster_n == 1 &&
         store_bound_batch(n, k, request.batch) && grid_tiles(m, n, c.block_m, c.block_n, request.batch) <= num_sms;
}

}  // namespace

Config select_config(int64_t m, int64_t n, int64_t k, int num_sms, const ConfigRequest& request) {
  Config c = select_tiles(m, n, k, num_sms, request);
  if (takes_narrow_batch_tile(c, m, n, k, num_sms, request)) {
    ConfigRequest narrow = request;
    narrow.block_m = kBlockM;
    narrow.block_n = 64;
    c = select_tiles(m, n, k, num_sms, narrow);
  }
  const bool small_l2 = request.l2_bytes > 0 && request.l2_bytes < kCountedMaxL2Bytes;
  const int64_t problem_tiles = ceil_div(m, kBlockM) * static_cast<int64_t>(ceil_div(n, 128));
  if (c.pingpong && c.block_n == 128 && is_automatic(request) && request.schedule == Schedule::automatic &&
      request.batch > 1 && k >= kPairedBatchMinK && problem_tiles >= kPairedBatchMinTiles &&
      problem_tiles * request.batch >= kPairedBatchMinTilesPerSm * num_sms && small_l2) {
    ConfigRequest pairs = request;
    pairs.block_n = 256;
    pairs.cluster_m = 2;
    c = select_tiles(m, n, k, num_sms, pairs);
  }
  c.group_m = raster_group(c, n, k, request.batch);
  const bool countable = counts_tiles(c.block_m, c.cluster_m * c.cluster_n, c.swap_ab, false);
  const int64_t tiles = grid_tiles(m, n, c.block_m, c.block_n, request.batch);
  const bool counted = request.schedule == Schedule::automatic
                           ? store_bound_batch(n, k, request.batch) && tiles >= kCountedMinTilesPerSm * num_sms &&
                                 small_l2
                           : request.schedule == Schedule::counted;
  c.schedule = countable && counted ? Schedule::counted : Schedule::persistent;
  return c;
}

const TileConfig* grouped_tile_config(int block_n, int block_m, bool pingpong) {
  for (const TileConfig& c : kGroupedTileConfigs)
    if ((block_n == 0 || c.block_n == block_n) && (block_m == 0 || c.block_m == block_m) &&
        (!pingpong || c.pingpong))
      return &c;
  return nullptr;
}

Config select_grouped_config(int64_t m, int64_t n, int64_t k, int64_t groups, int num_sms, int block_n_override,
                             int block_m_override, bool pingpong_override) {
  (void)k;
  if (num_sms < 1) num_sms = 1;
  if (groups < 1) groups = 1;
  const TileConfig* t = grouped_tile_config(block_n_override, block_m_override, pingpong_override);
  if (t == nullptr || (block_n_override == 0 && block_m_override == 0 && !pingpong_override)) {
    switch (detail::grouped_tile_for(m, n, groups, num_sms, kBlockM)) {
      case detail::GroupedTile::few_rows: t = grouped_tile_config(128, kSmallBlockM, false); break;
      case detail::GroupedTile::wide: t = grouped_tile_config(256, kBlockM, false); break;
      case detail::GroupedTile::square: t = grouped_tile_config(128, kBlockM, true); break;
    }
  }
  Config c{};
  c.block_m = t->block_m;
  c.block_n = t->block_n;
  c.block_k = kBlockK;
  c.stages = stages_for(c.block_n, c.block_m);
  c.cluster_m = 1;
  c.cluster_n = 1;
  c.pingpong = t->pingpong;
  c.schedule = Schedule::persistent;
  c.group_m = kRasterGroupM;
  const int64_t tiles = detail::max_group_slots(m, groups, c.block_m) * ceil_div(n, c.block_n);
  c.num_ctas = static_cast<int>(tiles < num_sms ? tiles : num_sms);
  return c;
}

bool pairs_c(const GemmArgs& call, int block_m, int block_n, bool swap_ab, bool pingpong) {
  return pingpong && stores_panel_pairs(block_m, block_n, swap_ab, call.grouped()) && !call.fused_epilogue() &&
         call.n % kEpiPanel == 0 && call.k <= kPairsMaxK;
}

std::string describe(const KernelConfig& c) {
  return std::to_string(c.block_m) + "x" + std::to_string(c.block_n) + "x" + std::to_string(c.block_k) + ", " +
         std::to_string(c.stages) + " stages" + (c.cluster_m > 1 ? ", cluster 2x1 (B multicast)" : "") +
         (c.cluster_n > 1 ? ", cluster 1x2 (A multicast)" : "") +
         (c.pingpong ? ", ping-pong" : "") + (c.swap_ab ? ", swapped (C^T = B^T A^T)" : "") +
         (c.schedule == Schedule::counted ? ", counted tiles" : "");
}

}  // namespace tcgemm::sm90
