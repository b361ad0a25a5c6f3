// Argument validation that needs no GPU: sizes, leading dimensions, enums,
// null pointers. Pure host code, unit-tested in tests/host.
#pragma once

#include <string>

#include "tcgemm/tcgemm.hpp"

namespace tcgemm::detail {

// "m=128 n=256 k=64 dtype=f16 layout=NT lda=64 ldb=64 ldc=256": the whole case,
// appended to every message so a failure can be reproduced from the log.
std::string describe(const GemmArgs& args);

// The rows and columns of each operand as stored (row-major).
struct StoredShape {
  int64_t rows, cols;
};
StoredShape stored_shape_a(const GemmArgs& args);
StoredShape stored_shape_b(const GemmArgs& args);

// Whether the call reads A and B: K > 0 and alpha != 0. Otherwise, as in
// BLAS, C = beta * C (with a fused epilogue act(bias) + beta * C) and A and B
// are not read: they may be null, and NaN or Inf in them does not reach C.
inline bool reads_a_and_b(const GemmArgs& args) { return args.k > 0 && args.alpha != 0.0f; }

// Empty when the arguments are acceptable to every backend; otherwise the
// reason, starting with what is wrong and ending with describe(args).
std::string check_args(const GemmArgs& args);

}  // namespace tcgemm::detail
