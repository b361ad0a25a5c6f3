// What a kernel compiles to outside its own architecture.
//
// Each kernel family is device code for one architecture: sm90 for sm_90a
// (wgmma, setmaxnreg), sm100 for sm_100a (tcgen05, Cluster Launch Control).
// A kernel's body is guarded by its architecture and these are its three
// compilations:
//
//   host pass (no __CUDA_ARCH__)   an empty body: the host only needs the
//                                  launch stub, never the code;
//   its own device pass            the kernel;
//   any other device pass          a compile-time error (kDependentFalse).
//
// The last is a build mistake, never a way to run: CMakeLists.txt compiles a
// family's translation units for its architecture only, and arch-specific
// cubins ("a" targets) load on that architecture only, so no GPU can ever
// run such a body. An empty body there would build a kernel that "succeeds"
// without writing C, and a __trap() one would defer the mistake to a run
// that cannot happen; the static_assert stops the build and says why.
#pragma once

namespace tcgemm::detail {

// false, but only when a template using it is instantiated.
template <typename...>
inline constexpr bool kDependentFalse = false;

}  // namespace tcgemm::detail
