#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "gpu_util.hpp"

namespace tcgemm::test {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;  // grid-stride beyond this

unsigned blocks_for(int64_t count) {
  const int64_t b = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

__host__ __device__ uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The value at logical (row, col) depends on the seed and the position only,
// not on the leading dimension or the base offset: the same case laid out
// differently holds the same matrix.
__device__ float random_value(int fill, uint64_t seed, uint64_t index) {
  const uint64_t h = splitmix64(splitmix64(seed) ^ index);
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
  switch (fill) {
    case 0:
      return 2.0f * u - 1.0f;
    case 1:
      return u;
    default:
      return static_cast<float>(static_cast<int>((h >> 32) % 5) - 2);
  }
}

__device__ uint16_t to_bits(int dtype, float v) {
  return dtype == 0 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

__device__ bool bits_nan_or_inf(int dtype, uint16_t b) {
  return dtype == 0 ? (b & 0x7C00) == 0x7C00 : (b & 0x7F80) == 0x7F80;
}

__global__ void fill_kernel(int dtype, uint16_t* base, int64_t rows, int64_t cols, int64_t ld, int fill, uint64_t seed,
                            uint16_t pad_bits) {
  const int64_t total = rows * ld;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / ld, c = i % ld;
    base[i] = c < cols ? to_bits(dtype, random_value(fill, seed, static_cast<uint64_t>(r * cols + c))) : pad_bits;
  }
}

__global__ void fill_bits_kernel(uint16_t* base, int64_t count, uint16_t bits) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    base[i] = bits;
}

__global__ void count_kernel(int dtype, const uint16_t* base, int64_t rows, int64_t cols, int64_t ld,
                             unsigned long long* counts) {
  unsigned nonzero = 0, nan = 0;
  const int64_t total = rows * cols;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint16_t b = base[(i / cols) * ld + i % cols];
    nonzero += (b & 0x7FFF) != 0;
    nan += bits_nan_or_inf(dtype, b);
  }
  // One atomic per warp: millions of per-element atomics on two addresses
  // would dominate the suite's run time.
  nonzero = __reduce_add_sync(0xFFFFFFFFu, nonzero);
  nan = __reduce_add_sync(0xFFFFFFFFu, nan);
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&counts[0], static_cast<unsigned long long>(nonzero));
    atomicAdd(&counts[1], static_cast<unsigned long long>(nan));
  }
}

}  // namespace

const char* to_string(Fill fill) {
  switch (fill) {
    case Fill::uniform_pm1:
      return "uniform(-1,1)";
    case Fill::uniform_01:
      return "uniform(0,1)";
    case Fill::small_int:
      return "int[-2,2]";
  }
  return "?";
}

uint16_t poison_bits(DType dtype) { return dtype == DType::f16 ? 0x7E5A : 0x7FDA; }

void check_cuda(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess)
    throw std::runtime_error(what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

DeviceBuffer::DeviceBuffer(size_t elements) : size_(elements) {
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, elements * sizeof(uint16_t)), "cudaMalloc of " + std::to_string(elements) + " elements");
  ptr_ = static_cast<uint16_t*>(p);
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(other.ptr_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void fill_matrix(DType dtype, uint16_t* base, int64_t rows, int64_t cols, int64_t ld, Fill fill, uint64_t seed) {
  if (rows <= 0 || ld <= 0) return;
  fill_kernel<<<blocks_for(rows * ld), kThreads>>>(static_cast<int>(dtype), base, rows, cols, ld,
                                                   static_cast<int>(fill), seed, poison_bits(dtype));
  check_cuda(cudaGetLastError(), "fill_kernel launch");
  check_cuda(cudaDeviceSynchronize(), "fill_kernel");
}

void fill_bits(uint16_t* base, size_t count, uint16_t bits) {
  if (count == 0) return;
  fill_bits_kernel<<<blocks_for(static_cast<int64_t>(count)), kThreads>>>(base, static_cast<int64_t>(count), bits);
  check_cuda(cudaGetLastError(), "fill_bits_kernel launch");
  check_cuda(cudaDeviceSynchronize(), "fill_bits_kernel");
}

ValueCounts count_values(DType dtype, const uint16_t* base, int64_t rows, int64_t cols, int64_t ld) {
  ValueCounts out;
  if (rows <= 0 || cols <= 0) return out;
  unsigned long long* counts = nullptr;
  check_cuda(cudaMalloc(&counts, 2 * sizeof(unsigned long long)), "cudaMalloc counts");
  cudaError_t err = cudaMemset(counts, 0, 2 * sizeof(unsigned long long));
  if (err == cudaSuccess) {
    count_kernel<<<blocks_for(rows * cols), kThreads>>>(static_cast<int>(dtype), base, rows, cols, ld, counts);
    err = cudaGetLastError();
  }
  unsigned long long host[2] = {0, 0};
  if (err == cudaSuccess) err = cudaMemcpy(host, counts, sizeof(host), cudaMemcpyDeviceToHost);
  cudaFree(counts);
  check_cuda(err, "count_kernel");
  out.nonzero = static_cast<int64_t>(host[0]);
  out.nan = static_cast<int64_t>(host[1]);
  return out;
}

std::vector<uint16_t> download(const uint16_t* device, size_t count) {
  std::vector<uint16_t> host(count);
  if (count > 0)
    check_cuda(cudaMemcpy(host.data(), device, count * sizeof(uint16_t), cudaMemcpyDeviceToHost), "download");
  return host;
}

void upload(uint16_t* device, const std::vector<uint16_t>& host) {
  if (!host.empty())
    check_cuda(cudaMemcpy(device, host.data(), host.size() * sizeof(uint16_t), cudaMemcpyHostToDevice), "upload");
}

void copy_device(uint16_t* dst, const uint16_t* src, size_t count) {
  if (count > 0) check_cuda(cudaMemcpy(dst, src, count * sizeof(uint16_t), cudaMemcpyDeviceToDevice), "device copy");
}

namespace {
float float_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t bits_from_float(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
}  // namespace

float to_float(DType dtype, uint16_t b) {
  if (dtype == DType::bf16) return float_from_bits(static_cast<uint32_t>(b) << 16);
  const uint32_t sign = static_cast<uint32_t>(b & 0x8000) << 16;
  const uint32_t exp = (b >> 10) & 0x1F, mant = b & 0x3FF;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return float_from_bits(sign | 0x7F800000u | (mant << 13));
  return float_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t from_float(DType dtype, float v) {
  const uint32_t x = bits_from_float(v);
  if (dtype == DType::bf16) {
    if (std::isnan(v)) return static_cast<uint16_t>((x >> 16) | 0x40);
    return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
  }
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  if (std::isnan(v)) return sign | 0x7E00;
  const float a = std::fabs(v);
  if (a >= 65520.0f) return sign | 0x7C00;  // 65520 is the midpoint to infinity; ties go to even (inf)
  if (a < 6.103515625e-05f) {               // below 2^-14: subnormal, in units of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(a, 24)));
  }
  const uint32_t xa = bits_from_float(a);
  const uint32_t exp = (xa >> 23) - 127 + 15, mant = xa & 0x7FFFFF;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;  // a carry into the exponent is correct
  return sign | static_cast<uint16_t>(h);
}

bool is_nan_or_inf(DType dtype, uint16_t b) {
  return dtype == DType::f16 ? (b & 0x7C00) == 0x7C00 : (b & 0x7F80) == 0x7F80;
}

}  // namespace tcgemm::test
