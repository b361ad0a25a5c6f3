// tcgemm from another CMake project: one GEMM through the C++ API and the
// same through the C ABI, both checked against a host computation, with the
// plan (backend, kernel, reason) printed.
//
// Exit status: 0 both calls ran and agree with the host result; 3 no CUDA
// device is visible (tcgemm's Status::no_device: its reason is printed, and
// both APIs are shown to report it); 1 anything else.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "tcgemm/tcgemm.h"
#include "tcgemm/tcgemm.hpp"

namespace {

constexpr int64_t kM = 96, kN = 160, kK = 200;

void print_plan(const char* what, const tcgemm::Plan& p) {
  std::printf("%s: status %s, backend %s, kernel %s\n  reason: %s\n", what, tcgemm::to_string(p.status),
              tcgemm::to_string(p.backend), p.kernel.c_str(), p.reason.c_str());
}

// Small integers: every product and partial sum is exact in fp32 and the
// result exact in fp16, so any correct GEMM gives these values exactly.
float a_value(int64_t i, int64_t k) { return static_cast<float>((i * 3 + k * 5) % 7 - 3); }
float b_value(int64_t k, int64_t j) { return static_cast<float>((k * 2 + j * 7) % 5 - 2); }

}  // namespace

int main() {
  std::printf("tcgemm %s\n", tcgemm::build_info().version);
  tcgemm::GemmArgs args;
  args.dtype = tcgemm::DType::f16;
  args.m = kM;
  args.n = kN;
  args.k = kK;
  args.lda = kK;
  args.ldb = kN;
  args.ldc = kN;

  std::vector<__half> a(kM * kK), b(kK * kN), c(kM * kN), c2(kM * kN);
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t k = 0; k < kK; ++k) a[i * kK + k] = __float2half(a_value(i, k));
  for (int64_t k = 0; k < kK; ++k)
    for (int64_t j = 0; j < kN; ++j) b[k * kN + j] = __float2half(b_value(k, j));

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    // Nothing can be allocated on a device: ask both APIs with the host
    // arrays, to show what a caller on such a machine is told (the device
    // check comes before the operands' memory is looked at).
    args.a = a.data();
    args.b = b.data();
    args.c = c.data();
    const tcgemm::Plan p = tcgemm::plan(args);
    print_plan("C++ API, plan", p);
    const int status = tcgemm_gemm(TCGEMM_F16, TCGEMM_OP_N, TCGEMM_OP_N, kM, kN, kK, 1.0f, a.data(), kK, b.data(), kN,
                                   0.0f, c.data(), kN, nullptr);
    std::printf("C ABI: tcgemm_gemm returned %d: %s\n", status, tcgemm_last_error());
    return p.status == tcgemm::Status::no_device && status == TCGEMM_NO_DEVICE ? 3 : 1;
  }

  void *da = nullptr, *db = nullptr, *dc = nullptr, *dc2 = nullptr;
  const size_t c_bytes = sizeof(__half) * kM * kN;
  if (cudaMalloc(&da, sizeof(__half) * a.size()) != cudaSuccess || cudaMalloc(&db, sizeof(__half) * b.size()) != cudaSuccess ||
      cudaMalloc(&dc, c_bytes) != cudaSuccess || cudaMalloc(&dc2, c_bytes) != cudaSuccess) {
    std::printf("cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(da, a.data(), sizeof(__half) * a.size(), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), sizeof(__half) * b.size(), cudaMemcpyHostToDevice);
  args.a = da;
  args.b = db;
  args.c = dc;

  const tcgemm::Plan p = tcgemm::gemm(args);
  print_plan("C++ API, gemm", p);
  const int status =
      tcgemm_gemm(TCGEMM_F16, TCGEMM_OP_N, TCGEMM_OP_N, kM, kN, kK, 1.0f, da, kK, db, kN, 0.0f, dc2, kN, nullptr);
  std::printf("C ABI: tcgemm_gemm returned %d%s%s\n", status, status != 0 ? ": " : "",
              status != 0 ? tcgemm_last_error() : "");
  if (p.status != tcgemm::Status::ok || status != 0) return 1;

  if (cudaMemcpy(c.data(), dc, c_bytes, cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemcpy(c2.data(), dc2, c_bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::printf("copying C back failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < kM; ++i)
    for (int64_t j = 0; j < kN; ++j) {
      float ref = 0.0f;
      for (int64_t k = 0; k < kK; ++k) ref += a_value(i, k) * b_value(k, j);
      wrong += __half2float(c[i * kN + j]) != ref || __half2float(c2[i * kN + j]) != ref;
    }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dc2);
  std::printf("%lld of %lld elements differ from the host result\n", static_cast<long long>(wrong),
              static_cast<long long>(2 * kM * kN));
  return wrong == 0 ? 0 : 1;
}
