#!/usr/bin/env bash
# Installs what one of the two commands needs, and nothing more, on a
# Debian/Ubuntu machine that already has the CUDA 13 toolkit (nvcc):
#   setup.sh bench   CMake, Ninja and a C++20 compiler (g++)
#   setup.sh test    the same, GoogleTest, python3 and pytest; then, best
#                    effort, clang with libFuzzer (the API fuzz test), torch
#                    (the tensor-parallel schedules' tests, which run on CPU),
#                    scikit-build-core (with a CUDA build of torch: the torch
#                    operators' tests) and, when the toolkit has none,
#                    cuobjdump/nvdisasm (the SASS check)
# (no argument: test). Only what is missing is installed: with nothing
# missing, no package manager runs. A required tool that cannot be installed
# (no network, say) stops setup with one line naming it and what needs it; an
# optional one costs one line naming the test that will be skipped.
# TCGEMM_SETUP_STRICT=1 (CI) makes the optional tools required too, so that a
# run cannot pass with a test silently skipped.
# Package managers are bounded in time: offline they fail in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-test}
case $mode in
  bench | test) ;;
  *) echo "usage: setup.sh [bench|test]" >&2; exit 2 ;;
esac
strict=${TCGEMM_SETUP_STRICT:-0}
source scripts/env.sh  # the toolkit's bin/ and .tools/ on PATH, as the build sees them

fail() { echo "setup: $*" >&2; exit 1; }
# optional_missing TOOL TEST REASON: a tool that could not be had costs its
# test, which is skipped; under TCGEMM_SETUP_STRICT it is a failure.
optional_missing() {
  if [[ $strict == 1 ]]; then fail "no $1 ($3): TCGEMM_SETUP_STRICT=1 requires it for the $2"; fi
  echo "setup: no $1: the $2 will be skipped ($3)" >&2
}

if ! command -v nvcc >/dev/null; then
  fail "nvcc not found: the kernels need the CUDA 13 toolkit (install it, or put its bin/ on PATH)"
fi
nvcc_version=$(nvcc --version | grep -oE 'release [0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+' || true)
if [[ ${nvcc_version%%.*} -lt 13 ]] 2>/dev/null || [[ -z $nvcc_version ]]; then
  fail "$(command -v nvcc) is CUDA ${nvcc_version:-of an unknown release}: the kernels need the CUDA 13 toolkit" \
    "(put its bin/ first on PATH)"
fi

log=$(mktemp) probe=""
trap 'rm -rf "$log" ${probe:+"$probe"}' EXIT
# (sudo -n: never a password prompt, which timeout would not bound; a user
# who must type one installs the packages named in the message instead.)
sudo=""; [[ $(id -u) -ne 0 ]] && sudo="sudo -n"
# No retries and short network timeouts: without network apt gives up at once
# instead of retrying each mirror; timeout bounds the rest.
apt_opts=(-o Acquire::Retries=0 -o Acquire::http::Timeout=20 -o Acquire::https::Timeout=20 -o DPkg::Lock::Timeout=120)
apt_updated=0
apt_install() {  # PACKAGE...: the package lists are refreshed once, on first use
  command -v apt-get >/dev/null || { echo "E: apt-get not found" > "$log"; return 1; }
  if [[ $apt_updated == 0 ]]; then
    apt_updated=1
    # Offline, update only warns and keeps the old lists; the install then fails.
    $sudo timeout 300 apt-get "${apt_opts[@]}" update -qq > "$log" 2>&1 || true
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive timeout 1800 apt-get "${apt_opts[@]}" install -y -qq "$@" >> "$log" 2>&1
}
pip_install() {  # ARG...: a few seconds offline instead of minutes of retries
  local status=0
  timeout 600 python3 -m pip install -q --disable-pip-version-check --timeout 15 --retries 1 "$@" > "$log" 2>&1 ||
    status=$?
  # A distribution's own python3 refuses pip installs unless told (PEP 668).
  if [[ $status -ne 0 ]] && grep -q externally-managed-environment "$log"; then
    status=0
    timeout 600 python3 -m pip install -q --disable-pip-version-check --timeout 15 --retries 1 \
      --break-system-packages "$@" > "$log" 2>&1 || status=$?
  fi
  return $status
}
# Why the last install failed, in one line: apt's or pip's first error (or
# the last line it wrote), without the addresses it names.
reason() {
  local line
  line=$({ grep -m1 -E '^(E: |ERROR: )' "$log" || grep . "$log" | tail -1; } |
    sed -E 's/^(E|ERROR): //; s#[a-z]+://[^ ]*##g; s/ +/ /g' | cut -c1-160) || true
  echo "${line:-no output; timed out?}"
}

# ---------------------------------------------------------------------------
# Required: installed when missing, or setup stops.
# ---------------------------------------------------------------------------
need=() needed_for=()
want() { need+=("$1"); needed_for+=("$1 ($2)"); }  # PACKAGE WHAT-NEEDS-IT
# CMake 3.24 or newer (CMakeLists.txt); an older one is replaced from PyPI below.
cmake_new_enough() {
  local v
  v=$(cmake --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+' | head -1)
  [[ -n $v && $(printf '%s\n' 3.24 "$v" | sort -V | head -1) == 3.24 ]]
}
command -v cmake >/dev/null || want cmake "the build"
command -v ninja >/dev/null || want ninja-build "the build"
command -v g++ >/dev/null || want g++ "the build and nvcc's host compiler"
if [[ $mode == test ]]; then
  [[ -f /usr/include/gtest/gtest.h || -f /usr/local/include/gtest/gtest.h ]] || want libgtest-dev "the C++ tests"
  if ! command -v python3 >/dev/null; then
    want python3 "the Python tests"
    want python3-pip "to install pytest"
  elif ! python3 -c "import pytest" 2>/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
    want python3-pip "to install pytest"
  fi
fi
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}"
  if ! apt_install "${need[@]}"; then
    list=$(printf '%s, ' "${needed_for[@]}")
    them=them; ((${#need[@]} == 1)) && them=it
    fail "cannot install ${list%, }: $(reason); install $them and run again"
  fi
fi
if ! cmake_new_enough; then
  # (Ubuntu 22.04's CMake is 3.22.) A newer one comes from PyPI, through pip,
  # which the bench setup has not asked for.
  if ! python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: installing python3-pip (to install CMake 3.24 or newer)"
    apt_install python3 python3-pip ||
      fail "cannot install python3-pip (to install CMake 3.24 or newer): $(reason); install CMake 3.24 or newer and run again"
  fi
  echo "setup: $(cmake --version | head -1) is older than 3.24: installing cmake from PyPI"
  pip_install cmake || fail "cannot install CMake 3.24 or newer: $(reason); install it and run again"
  hash -r
  if ! cmake_new_enough; then
    # pip run by a user without write access to the system's packages installs into ~/.local.
    [[ -x $HOME/.local/bin/cmake && ":$PATH:" != *":$HOME/.local/bin:"* ]] &&
      fail "CMake 3.24 or newer was installed into $HOME/.local/bin, which is not on PATH: add it" \
        "(export PATH=\"\$HOME/.local/bin:\$PATH\") and run again"
    fail "CMake 3.24 or newer was installed, but $(command -v cmake) comes first on PATH and is older"
  fi
fi
if [[ $mode == test ]] && ! python3 -c "import pytest" 2>/dev/null; then
  echo "setup: installing pytest"
  pip_install pytest || fail "cannot install pytest (the Python tests): $(reason); install it and run again"
fi

# ---------------------------------------------------------------------------
# Optional (test only): without them one test is skipped, and says so.
# ---------------------------------------------------------------------------
if [[ $mode == test ]]; then
  # clang with libFuzzer, ASan and UBSan: the API fuzz test. libFuzzer's
  # runtime comes with clang on some distributions and in
  # libclang-rt-<version>-dev on others (Debian 12, Ubuntu 24.04).
  if ! command -v clang++ >/dev/null; then
    echo "setup: installing clang"
    if ! apt_install clang; then
      optional_missing "clang (libFuzzer)" "API fuzz test" "$(reason)"
    elif ! command -v clang++ >/dev/null; then
      optional_missing "clang (libFuzzer)" "API fuzz test" "installed, but no clang++ on PATH"
    fi
  fi
  if command -v clang++ >/dev/null; then
    probe=$(mktemp -d)
    printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
    links() { clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; }
    if ! links; then
      version=$(clang++ --version | grep -o 'version [0-9]*' | grep -o '[0-9]*' | head -1)
      echo "setup: installing libclang-rt-$version-dev (libFuzzer)"
      if ! apt_install "libclang-rt-$version-dev"; then
        optional_missing "libFuzzer runtime for clang $version" "API fuzz test" "$(reason)"
      elif ! links; then
        optional_missing "libFuzzer runtime for clang $version" "API fuzz test" "installed, but clang++ -fsanitize=fuzzer still does not link"
      fi
    fi
  fi

  # torch: python/tests/test_tp_schedules.py runs tcgemm.distributed's
  # schedules in CPU processes over gloo (no GPU, no compiled package).
  if ! python3 -c "import torch.distributed" 2>/dev/null; then
    echo "setup: installing torch"
    pip_install torch || optional_missing torch "tensor-parallel schedule tests" "$(reason)"
  fi
  # scikit-build-core: with a CUDA build of torch, scripts/test.sh builds the
  # tcgemm package (pip install --no-build-isolation) and runs its operators'
  # tests, on meta and CPU tensors where there is no GPU.
  if python3 -c "import sys, torch; sys.exit(0 if torch.version.cuda else 1)" 2>/dev/null &&
      ! python3 -c "import scikit_build_core" 2>/dev/null; then
    echo "setup: installing scikit-build-core"
    pip_install scikit-build-core || optional_missing scikit-build-core "torch operator tests" "$(reason)"
  fi

  # cuobjdump (and nvdisasm) read the shipped machine code for
  # tests/check_sass.sh; from PyPI into .tools/ when the toolkit has none.
  if ! command -v cuobjdump >/dev/null; then
    echo "setup: installing cuobjdump and nvdisasm into .tools/"
    pip_install --target .tools nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm==13.2.78 ||
      optional_missing cuobjdump "SASS check" "$(reason)"
  fi
fi
echo "setup: ok for $mode ($(nvcc --version | grep -o 'release [0-9.]*'), $(cmake --version | head -1))"
