// Tile order shared by every kernel family: maps a linear tile index to
// (m_block, n_block) in a grouped ("L2-friendly") raster order. The sm90
// kernel walks it persistently; the sm100 kernel walks it persistently or by
// Cluster Launch Control (sm100/clc_scheduler.cuh), one index per cluster.
//
// Tiles are taken in groups of `group_m` block-rows: inside a group, m_block
// varies fastest, then n_block. A wave of CTAs therefore works on a compact
// group_m x (wave / group_m) patch of C, so the A rows and B columns it needs
// are read from DRAM about once and then hit in L2.
//
// A strided batch (GemmArgs::batch > 1) is `batch` such grids, one after
// another in the index: tile index t is tile t % tiles_per_batch() of batch
// t / tiles_per_batch(), so one persistent grid walks the whole batch and a
// batch of small problems still fills the GPU. A grid of batch 1 decodes
// without the division.
//
// Persistent schedule: CTA (or cluster) `c` of `count` takes tiles c,
// c + count, ... in order (PersistentSchedule below).
// Pure arithmetic, usable on host and device; tests/host checks that it is a
// bijection onto the tile grid and that groups are contiguous.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TCGEMM_HD __host__ __device__ __forceinline__
#else
#define TCGEMM_HD inline
#endif

namespace tcgemm::detail {

struct TileCoord {
  int m_block;
  int n_block;
  int batch = 0;  // which problem of a strided batch (0 without one)
};

struct GroupedRaster {
  int num_m_blocks;
  int num_n_blocks;
  int group_m;    // block-rows per group, >= 1
  int batch = 1;  // problems of num_m_blocks x num_n_blocks tiles each (GemmArgs::batch)

  TCGEMM_HD int tiles_per_batch() const { return num_m_blocks * num_n_blocks; }
  TCGEMM_HD int num_tiles() const { return tiles_per_batch() * batch; }

  // The tile at `index` of the whole walk. The batch's division is paid only
  // by a batched grid: a plain one goes straight to in_batch().
  TCGEMM_HD TileCoord tile(int index) const {
    if (batch > 1) {
      const int b = index / tiles_per_batch();
      TileCoord t = in_batch(index - b * tiles_per_batch());
      t.batch = b;
      return t;
    }
    return in_batch(index);
  }

  // The tile at `index` of one problem's grid (batch 0), in grouped order.
  // Its two divisions are unsigned (every index and count here is >= 0): on
  // the GPU an unsigned division is about 17 instructions, a signed one 25,
  // and every role of a kernel decodes every tile it takes.
  TCGEMM_HD TileCoord in_batch(int index) const {
    const unsigned tiles_per_group = static_cast<unsigned>(group_m * num_n_blocks);
    const unsigned group = static_cast<unsigned>(index) / tiles_per_group;
    const int first_m = static_cast<int>(group) * group_m;
    // The last group may have fewer block-rows.
    const unsigned rows_here =
        static_cast<unsigned>(num_m_blocks - first_m < group_m ? num_m_blocks - first_m : group_m);
    const unsigned in_group = static_cast<unsigned>(index) - group * tiles_per_group;
    const unsigned column = in_group / rows_here;
    return TileCoord{first_m + static_cast<int>(in_group - column * rows_here), static_cast<int>(column)};
  }
};

// How a batched call's operands follow the batch: the coordinate of batch b
// in A's rank-3 tensor map is b * a (B's: b * b). 1 for an operand with a
// matrix per batch; 0 for one repeated for every batch (stride 0), whose map
// holds that one matrix (TMA is not given a zero stride).
struct BatchSteps {
  int a = 1;
  int b = 1;
};

// Which operands a grid's walk reads exactly once, every k-block of them by
// one tile: B where the grid has one block-row (a decoding call's weights
// against a few tokens), A where it has one block-column; in a batch, only
// an operand with a matrix per problem (a repeated one is read once a
// problem). Their TMA loads carry an L2 evict-first policy, so that the
// stream takes the lines it leaves behind, not the lines of other data
// (the next kernel's inputs, or the dirty lines of the previous one's
// output, which would otherwise be written back while it streams)
// (docs/DESIGN.md, "Operands read once"). An M-grouped call's groups share B:
// none. Only for an operand of at most kReadOnceMaxL2Multiple times the L2
// (`l2_bytes`; 0: not known, no hints): on an H100 the hint gained 3-14% on
// decoding calls whose weights were 25-180 MB and lost 2-5% on those of
// 235-940 MB, under a flush that left L2 dirty (docs/PERF.md, part 25).
struct LoadHints {
  int a_evict_first = 0;
  int b_evict_first = 0;
};

inline constexpr int64_t kReadOnceMaxL2Multiple = 4;

// An operand's bytes over a call: `rows` x k elements of `element_bytes`,
// once per problem of a batch where it has a matrix per problem (step 1),
// once where it is repeated (step 0).
inline int64_t operand_bytes(int64_t rows, int64_t k, int element_bytes, int64_t batch, int step) {
  return rows * k * element_bytes * (step != 0 ? batch : 1);
}

// The hints of the kernel's call of m x n x k (A m x k, B n x k, 2-byte
// elements) walked as `raster`.
inline LoadHints load_hints(const GroupedRaster& raster, const BatchSteps& steps, bool grouped, int64_t m, int64_t n,
                            int64_t k, int64_t l2_bytes) {
  if (grouped || l2_bytes <= 0) return {};
  const bool plain = raster.batch == 1;
  const int64_t max_bytes = kReadOnceMaxL2Multiple * l2_bytes;
  const bool a_fits = operand_bytes(m, k, 2, raster.batch, steps.a) <= max_bytes;
  const bool b_fits = operand_bytes(n, k, 2, raster.batch, steps.b) <= max_bytes;
  return LoadHints{raster.num_n_blocks == 1 && (plain || steps.a != 0) && a_fits ? 1 : 0,
                   raster.num_m_blocks == 1 && (plain || steps.b != 0) && b_fits ? 1 : 0};
}

TCGEMM_HD int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Fraction of `slots` (concurrent tiles: SMs, or clusters) kept busy over the
// waves that `tiles` tiles take: 1 when the last wave is full. Host only
// (the configuration choice of each family).
inline double wave_efficiency(int64_t tiles, int slots) {
  const int64_t waves = (tiles + slots - 1) / slots;
  return static_cast<double>(tiles) / static_cast<double>(waves * slots);
}

// Share of the columns of N's tiles `block_n` wide that lie inside N: 1
// when block_n divides N. A tile past N's edge does its whole MMA work for
// the columns it keeps, so a width's score is scaled by it (N = 16 at
// M = 10240: a 256-wide tile does 16 times the output's work). Host only.
inline double column_share(int64_t n, int block_n) {
  return static_cast<double>(n) / (static_cast<double>(ceil_div(n, block_n)) * block_n);
}

// Whether an M x N output cut into block_m x block_n tiles has few enough
// tiles for the 32-bit tile indices of the schedules (found by the API
// fuzzer: M = N = 2^31-1 would overflow them). Host code only needs it.
// With a batch, every problem's tiles count: batch x tiles must fit too.
inline constexpr bool tile_count_fits_int32(int64_t m, int64_t n, int block_m, int block_n, int64_t batch = 1) {
  return batch >= 1 &&
         ((m + block_m - 1) / block_m) * ((n + block_n - 1) / block_n) <= int64_t{0x7FFFFFFF} / batch;
}

// The static persistent schedule: worker `first` of `stride` (a CTA, or a
// cluster) takes tile indices first, first + stride, ... below num_tiles.
struct PersistentSchedule {
  int first;
  int stride;
  int num_tiles;

  // The j-th tile index of this worker, or -1 when it has no j-th tile.
  TCGEMM_HD int tile(int j) const {
    const int64_t t = first + static_cast<int64_t>(j) * stride;
    return t < num_tiles ? static_cast<int>(t) : -1;
  }
};

}  // namespace tcgemm::detail
