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

# A staged build (scripts/stage_prebuilt.sh) in DIR: checks that DIR holds one,
# makes PREBUILT its absolute path, puts its library first on LD_LIBRARY_PATH
# and its CLI in $tcgemm. CALLER names the script in the message.
use_staged() {  # DIR CALLER
  if [[ ! -x $1/tcgemm || ! -e $1/libtcgemm.so.1 ]]; then
    echo "$2: no staged build at '$1' (scripts/stage_prebuilt.sh, then copy it to this machine)"
    return 2
  fi
  PREBUILT=$(cd "$1" && pwd)
  export LD_LIBRARY_PATH="$PREBUILT${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # shellcheck disable=SC2034  # (read by the scripts that source this file)
  tcgemm="$PREBUILT/tcgemm"
}
