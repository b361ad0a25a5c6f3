// CUDA graph and stream helpers of the GPU tests that capture calls
// (test_graphs.cpp, test_in_use.cpp).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <utility>

#include "gemm_case.hpp"

namespace tcgemm::test {

struct CaptureMode {
  cudaStreamCaptureMode mode;
  const char* name;
};
constexpr CaptureMode kModes[] = {{cudaStreamCaptureModeGlobal, "global"},
                                  {cudaStreamCaptureModeThreadLocal, "thread_local"},
                                  {cudaStreamCaptureModeRelaxed, "relaxed"}};

// A captured, instantiated graph; destroyed with the object.
class Graph {
 public:
  Graph() = default;
  Graph(Graph&& o) noexcept : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
  Graph& operator=(Graph&& o) noexcept {
    std::swap(graph_, o.graph_);
    std::swap(exec_, o.exec_);
    return *this;
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    if (graph_ != nullptr) cudaGraphDestroy(graph_);
  }

  // What `issue` enqueues on `stream` while it is captured in `mode`. A
  // call inside that capture forbids invalidates it: then this throws.
  static Graph capture(cudaStream_t stream, cudaStreamCaptureMode mode, const std::function<void()>& issue) {
    Graph g;
    check_cuda(cudaStreamBeginCapture(stream, mode), "cudaStreamBeginCapture");
    issue();
    const cudaError_t end = cudaStreamEndCapture(stream, &g.graph_);
    cudaGetLastError();
    check_cuda(end, "cudaStreamEndCapture (a call inside the capture invalidated it)");
    check_cuda(cudaGraphInstantiate(&g.exec_, g.graph_, 0), "cudaGraphInstantiate");
    return g;
  }

  size_t num_nodes() const {
    size_t n = 0;
    check_cuda(cudaGraphGetNodes(graph_, nullptr, &n), "cudaGraphGetNodes");
    return n;
  }

  // Launches the graph on `stream`, and (replay) waits for it.
  void launch(cudaStream_t stream) const { check_cuda(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch"); }
  void replay(cudaStream_t stream) const {
    launch(stream);
    check_cuda(cudaStreamSynchronize(stream), "graph replay");
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// A non-blocking stream (legacy-stream work does not order it), destroyed
// with the object. The legacy default stream cannot be captured.
class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

}  // namespace tcgemm::test
