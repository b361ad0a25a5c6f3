// Every output of a GEMM against the element-wise error bound
// (support/error_bound.hpp), on the GPU, with a float64 reference: one thread
// per output element computes alpha * sum_k a_ik b_kj + beta * c0_ij and the
// bound's magnitude terms in float64 (fp16/bf16 products are exact there) and
// judges the output's element. A 16M-element output is checked without a copy
// to the host. Waits for the call's stream; failures throw CudaError.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "support/error_bound.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::support {

// One output element beyond a bound: where, what it holds, what it should.
struct BoundViolation {
  int64_t row = -1, col = -1;  // row < 0: none
  uint16_t got_bits = 0;
  double got = 0.0;   // the element as fp16/bf16 holds it
  ElementTerms terms{};  // its float64 reference and magnitude terms
  double bound = 0.0;    // the bound it was held to

  bool any() const { return row >= 0; }
  // "C[3,17] = 0.1234 (0x2fe6), float64 reference 0.1230621, |c - ref| 3.4e-04 > bound 6.1e-05 (5.6x);
  //  |alpha| sum|a||b| 12.5, |beta||c0| 0.75"
  std::string str() const;
};

struct ElementwiseStats {
  int64_t count = 0;      // M * N
  int64_t nonfinite = 0;  // NaN/Inf outputs (beyond every bound)
  // Outputs beyond elementwise_bound(), and beyond the looser
  // elementwise_bound_rounded_twice(). An element whose difference from the
  // reference is NaN (a NaN output, or a NaN reference from NaN inputs)
  // counts as beyond.
  int64_t beyond = 0;
  int64_t beyond_rounded_twice = 0;
  // max |c - ref| / bound over the finite outputs.
  double worst = 0.0;
  double worst_rounded_twice = 0.0;
  // The first element (lowest row, then column) beyond each bound.
  BoundViolation first, first_rounded_twice;

  // Adds the figures of a later problem of a batch: counts summed, the
  // worst ratios kept, the first violations kept from the earliest problem
  // that has one.
  void merge(const ElementwiseStats& o) {
    if (!first.any() && o.first.any()) first = o.first;
    if (!first_rounded_twice.any() && o.first_rounded_twice.any()) first_rounded_twice = o.first_rounded_twice;
    count += o.count;
    nonfinite += o.nonfinite;
    beyond += o.beyond;
    beyond_rounded_twice += o.beyond_rounded_twice;
    worst = std::max(worst, o.worst);
    worst_rounded_twice = std::max(worst_rounded_twice, o.worst_rounded_twice);
  }
};

// Checks the output of the call `args` describes (its C pointer and ldc hold
// the result; A, B, alpha, beta, ops and leading dimensions are those of the
// call) against the bound. `c0` is C as it was before the call, with the same
// ldc; it is read only when beta != 0 (it may be null otherwise). A and B are
// read as GemmArgs describes them: row-major storage, op T stored transposed.
// Runs on args.stream.
ElementwiseStats check_elementwise(const GemmArgs& args, const void* c0);

}  // namespace tcgemm::support
