// cuBLAS configured the way PyTorch configures it for torch.matmul: the
// baseline `tcgemm bench` reports its speedups against, since that is what
// users compare with. PyTorch (2.x, CUDA) gives each cuBLAS handle a
// workspace of its own (32 MiB on compute capability 9.0, 8 MiB + 128 KiB
// elsewhere, unless CUBLAS_WORKSPACE_CONFIG says otherwise) and leaves
// reduced-precision reductions allowed for fp16 and bf16
// (torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction
// default to True). tcgemm's own cuBLAS fallback disallows them.
#pragma once

#include <string>

#include <cublas_v2.h>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

class TorchConfiguredCublas {
 public:
  // On the current device. Exits (CHECK_CUDA, CHECK_CUBLAS) if cuBLAS or the
  // workspace allocation fails: the bench cannot run without its baseline.
  TorchConfiguredCublas();
  ~TorchConfiguredCublas();
  TorchConfiguredCublas(const TorchConfiguredCublas&) = delete;
  TorchConfiguredCublas& operator=(const TorchConfiguredCublas&) = delete;

  // Empty on success, else what failed.
  std::string gemm(const GemmArgs& args);
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  cublasHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

}  // namespace tcgemm::cli
