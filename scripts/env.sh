# Sourced by the scripts: the toolkit (where no nvcc is on PATH yet: the
# user's own comes first) and the SASS tools on PATH, the build dir.
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
export PATH="$PWD/.tools/nvidia/cu13/bin:$PATH"
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
configure_and_build() {
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$BUILD_DIR" -j "$JOBS"
}
