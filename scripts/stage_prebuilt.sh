#!/usr/bin/env bash
# Copies what scripts/device_run.sh runs with PREBUILT=DIR out of a build
# (default build/) into DIR (default .scratch/prebuilt, ignored by git):
# libtcgemm, the `tcgemm` CLI and the host and GPU test programs, plus a
# STAGED note of the commit and whether the tree had changes. Copy DIR to
# the GPU machine with the tree, and there:
#
#   ninja -C build tcgemm tools/tcgemm tests/tcgemm_host_tests tests/tcgemm_gpu_tests
#   scripts/stage_prebuilt.sh build .scratch/prebuilt
#   (on the GPU machine) PREBUILT=.scratch/prebuilt STEPS="check test" scripts/device_run.sh
#
# The build must target the device's architecture (-DTCGEMM_CUDA_ARCHS=90a
# for the H200) and the binaries run against the device's CUDA runtime and
# cuBLAS (the same major version).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DEST=${2:-.scratch/prebuilt}
for f in libtcgemm.so.1 tools/tcgemm tests/tcgemm_host_tests tests/tcgemm_gpu_tests; do
  [[ -e $BUILD/$f ]] || { echo "stage_prebuilt.sh: $BUILD/$f is missing (build it first)"; exit 1; }
done
rm -rf "$DEST"
mkdir -p "$DEST"
cp -L "$BUILD/libtcgemm.so.1" "$BUILD/tools/tcgemm" "$BUILD/tests/tcgemm_host_tests" "$BUILD/tests/tcgemm_gpu_tests" "$DEST/"
{
  echo "staged from $BUILD: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src include tools tests cmake CMakeLists.txt || echo ' with uncommitted changes')"
  grep -E "^TCGEMM_CUDA_ARCHS|^CMAKE_BUILD_TYPE" "$BUILD/CMakeCache.txt" || true
} > "$DEST/STAGED"
cat "$DEST/STAGED"
du -sh "$DEST"
