// write_stream: how fast C can be written, by the shape of its TMA stores.
//
// A probe of the memory system, not a GEMM: every CTA of a persistent grid
// walks the tiles of a batch of bf16 matrices (batch x M x N) in the order
// the GEMM kernels do (row-major inside a problem, problem after problem,
// CTA c taking tiles c, c + grid, ...) and stores each tile from shared
// memory through TMA, in one of the box shapes below. Nothing is computed
// and nothing is read, so the time is the write stream's alone; cudaMemset
// of the same bytes is the ceiling beside it. docs/PERF.md ("Paired stores")
// has what it measured on an H100 and an H200.
//
//   ninja -C build write_stream && build/tools/write_stream [batch M N]   (default 128 2048 2048)
//
// Cases (128 x 128 tiles, two storing warps a CTA, each with its own
// buffers, as the ping-pong kernel's two consumers):
//   panels 64x64   the sm90 epilogue's panels: 64 rows x 128 bytes, 128-byte swizzle, two buffers a warp
//   pairs 64x128   two panels side by side in one box of a {64, N/64, M, batch} map (sm90's paired
//                  stores): 64 rows x 256 bytes, one buffer a warp
//   rows 64x128    the same bytes through a plain {N, M, batch} map, no swizzle
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <cuda/ptx>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "write_stream: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kTile = 128;
constexpr int kWarps = 2;

// rank 3: box {cols, rows, 1} at {col, row, batch}; rank 4: box {64, cols / 64, rows, 1} at {0, col / 64, row, batch}.
struct Walk {
  int batch, m, n;
  int box_rows, box_cols;
  int rank;
};

template <int BUFFERS>
__global__ void __launch_bounds__(32 * kWarps) store_tiles(const __grid_constant__ CUtensorMap map, Walk w) {
  extern __shared__ __align__(1024) uint8_t smem[];
  if (threadIdx.x % 32 != 0) return;
  const int warp = threadIdx.x / 32;
  const int box_bytes = w.box_rows * w.box_cols * 2;
  uint8_t* buffers = smem + warp * BUFFERS * box_bytes;
  const int tiles_n = w.n / kTile, per_problem = (w.m / kTile) * tiles_n, tiles = per_problem * w.batch;
  int use = 0;
  for (int t = blockIdx.x * kWarps + warp; t < tiles; t += gridDim.x * kWarps) {
    const int b = t / per_problem, in = t % per_problem;
    const int row0 = in / tiles_n * kTile, col0 = in % tiles_n * kTile;
    for (int r = 0; r < kTile; r += w.box_rows)
      for (int c = 0; c < kTile; c += w.box_cols, ++use) {
        cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<BUFFERS - 1>{});
        const void* src = buffers + (use % BUFFERS) * box_bytes;
        if (w.rank == 4) {
          const int32_t at[4] = {0, (col0 + c) / 64, row0 + r, b};
          cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map, at, src);
        } else {
          const int32_t at[3] = {col0 + c, row0 + r, b};
          cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, &map, at, src);
        }
        cuda::ptx::cp_async_bulk_commit_group();
      }
  }
  cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
}

struct Case {
  const char* name;
  Walk walk;
  int buffers;  // 0: cudaMemset
  CUtensorMapSwizzle swizzle;
};

CUtensorMap encode(void* c, const Case& k) {
  static auto fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q;
    check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q),
          "cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  const Walk& w = k.walk;
  const cuuint64_t row = static_cast<cuuint64_t>(w.n) * 2, problem = row * static_cast<cuuint64_t>(w.m);
  CUtensorMap map{};
  CUresult r;
  const cuuint32_t ones[4] = {1, 1, 1, 1};
  if (w.rank == 4) {
    const cuuint64_t dims[4] = {64, static_cast<cuuint64_t>(w.n / 64), static_cast<cuuint64_t>(w.m),
                                static_cast<cuuint64_t>(w.batch)};
    const cuuint64_t strides[3] = {128, row, problem};
    const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(w.box_cols / 64), static_cast<cuuint32_t>(w.box_rows), 1};
    r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, c, dims, strides, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
           k.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  } else {
    const cuuint64_t dims[3] = {static_cast<cuuint64_t>(w.n), static_cast<cuuint64_t>(w.m),
                                static_cast<cuuint64_t>(w.batch)};
    const cuuint64_t strides[2] = {row, problem};
    const cuuint32_t box[3] = {static_cast<cuuint32_t>(w.box_cols), static_cast<cuuint32_t>(w.box_rows), 1};
    r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, c, dims, strides, box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE,
           k.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  }
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "write_stream: cuTensorMapEncodeTiled failed for %s (CUresult %d)\n", k.name, static_cast<int>(r));
    std::exit(1);
  }
  return map;
}

}  // namespace

int main(int argc, char** argv) {
  const int batch = argc > 1 ? std::atoi(argv[1]) : 128;
  const int m = argc > 2 ? std::atoi(argv[2]) : 2048;
  const int n = argc > 3 ? std::atoi(argv[3]) : 2048;
  if (batch < 1 || m < kTile || n < kTile || m % kTile != 0 || n % kTile != 0) {
    std::fprintf(stderr, "usage: write_stream [batch M N]  (M and N multiples of %d)\n", kTile);
    return 2;
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (prop.major != 9) {
    std::fprintf(stderr, "write_stream: needs an sm_90 GPU (found %s, sm_%d%d)\n", prop.name, prop.major, prop.minor);
    return 2;
  }
  const size_t bytes = size_t{2} * batch * m * n;
  void* c = nullptr;
  check(cudaMalloc(&c, bytes), "cudaMalloc");
  const Walk base{batch, m, n, 0, 0, 3};
  const Case cases[] = {
      {"cudaMemset", base, 0, CU_TENSOR_MAP_SWIZZLE_NONE},
      {"panels 64x64 (128 B rows), 2 buffers", {batch, m, n, 64, 64, 3}, 2, CU_TENSOR_MAP_SWIZZLE_128B},
      {"pairs 64x128 (256 B rows), 1 buffer", {batch, m, n, 64, 128, 4}, 1, CU_TENSOR_MAP_SWIZZLE_128B},
      {"rows 64x128 (256 B rows), 1 buffer", {batch, m, n, 64, 128, 3}, 1, CU_TENSOR_MAP_SWIZZLE_NONE},
  };
  check(cudaFuncSetAttribute(store_tiles<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024), "smem opt-in");
  check(cudaFuncSetAttribute(store_tiles<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024), "smem opt-in");
  std::printf("%s, %d SMs: C = %d x %d x %d bf16, %.1f MB\n", prop.name, prop.multiProcessorCount, batch, m, n,
              bytes / 1e6);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  constexpr int kRounds = 3, kRepeats = 5;
  std::vector<std::vector<float>> ms(std::size(cases));
  // Interleaved rounds: each case once a round, so clock drift spreads over all of them.
  for (int round = 0; round < kRounds; ++round)
    for (size_t i = 0; i < std::size(cases); ++i) {
      const Case& k = cases[i];
      const CUtensorMap map = k.buffers ? encode(c, k) : CUtensorMap{};
      const int smem = kWarps * k.buffers * k.walk.box_rows * k.walk.box_cols * 2;
      const auto launch = [&] {
        if (k.buffers == 0) check(cudaMemsetAsync(c, 0x3c, bytes), "cudaMemsetAsync");
        else if (k.buffers == 1) store_tiles<1><<<prop.multiProcessorCount, 32 * kWarps, smem>>>(map, k.walk);
        else store_tiles<2><<<prop.multiProcessorCount, 32 * kWarps, smem>>>(map, k.walk);
      };
      launch();  // warm-up
      check(cudaDeviceSynchronize(), k.name);
      for (int r = 0; r < kRepeats; ++r) {
        check(cudaEventRecord(start), "record");
        launch();
        check(cudaEventRecord(stop), "record");
        check(cudaEventSynchronize(stop), k.name);
        float t = 0;
        check(cudaEventElapsedTime(&t, start, stop), "elapsed");
        ms[i].push_back(t);
      }
    }
  for (size_t i = 0; i < std::size(cases); ++i) {
    std::vector<float> t = ms[i];
    std::sort(t.begin(), t.end());
    const double median = t[t.size() / 2];
    std::printf("%-40s %9.1f us  %6.3f TB/s\n", cases[i].name, median * 1e3, bytes / (median * 1e-3) / 1e12);
  }
  check(cudaFree(c), "cudaFree");
  return 0;
}
