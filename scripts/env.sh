# Sourced by the scripts: the toolkit and the SASS tools on PATH, the build dir.
export PATH="/usr/local/cuda/bin:$PWD/.tools/nvidia/cu13/bin:$PATH"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
configure_and_build() {
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}
