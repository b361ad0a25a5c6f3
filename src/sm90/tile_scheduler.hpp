// Persistent tile scheduler for the sm90 kernel: maps a linear tile index to
// (m_block, n_block) in a grouped ("L2-friendly") raster order.
//
// Tiles are taken in groups of `group_m` block-rows: inside a group, m_block
// varies fastest, then n_block. A wave of CTAs therefore works on a compact
// group_m x (wave / group_m) patch of C, so the A rows and B columns it needs
// are read from DRAM about once and then hit in L2.
//
// CTA `cta` of `num_ctas` processes tiles cta, cta + num_ctas, ... in order.
// Pure arithmetic, usable on host and device; tests/host checks that it is a
// bijection onto the tile grid and that groups are contiguous.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define TCGEMM_HD __host__ __device__ __forceinline__
#else
#define TCGEMM_HD inline
#endif

namespace tcgemm::sm90 {

struct TileCoord {
  int m_block;
  int n_block;
};

struct GroupedRaster {
  int num_m_blocks;
  int num_n_blocks;
  int group_m;  // block-rows per group, >= 1

  TCGEMM_HD int num_tiles() const { return num_m_blocks * num_n_blocks; }

  TCGEMM_HD TileCoord tile(int index) const {
    const int tiles_per_group = group_m * num_n_blocks;
    const int group = index / tiles_per_group;
    const int first_m = group * group_m;
    // The last group may have fewer block-rows.
    const int rows_here = num_m_blocks - first_m < group_m ? num_m_blocks - first_m : group_m;
    const int in_group = index - group * tiles_per_group;
    return TileCoord{first_m + in_group % rows_here, in_group / rows_here};
  }
};

TCGEMM_HD int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace tcgemm::sm90
