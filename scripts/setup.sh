#!/usr/bin/env bash
# Installs what building and testing tcgemm needs on a fresh Debian/Ubuntu
# machine that already has the CUDA 13 toolkit (nvcc): CMake, Ninja, a C++20
# compiler, GoogleTest and clang (with libFuzzer, for the API fuzzer) from the
# distribution, and -- when the toolkit has
# none -- cuobjdump/nvdisasm from PyPI for the SASS checks (into .tools/).
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[[ -f /usr/include/gtest/gtest.h ]] || need+=(libgtest-dev)
command -v python3 >/dev/null || need+=(python3 python3-pip)
command -v clang++ >/dev/null || need+=(clang)  # the API fuzzer (libFuzzer, ASan, UBSan)
if ((${#need[@]})); then
  echo "setup: installing ${need[*]}"
  sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# libFuzzer's runtime comes with clang on some distributions and in
# libclang-rt-<version>-dev on others (Debian 12, Ubuntu 24.04).
if command -v clang++ >/dev/null; then
  probe=$(mktemp -d)
  printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
  if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>/dev/null; then
    version=$(clang++ --version | grep -o 'version [0-9]*' | grep -o '[0-9]*' | head -1)
    echo "setup: installing libclang-rt-$version-dev (libFuzzer)"
    sudo=""; [[ $(id -u) -ne 0 ]] && sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "libclang-rt-$version-dev" \
      >/dev/null || echo "setup: no libFuzzer runtime; the API fuzz test will be skipped" >&2
  fi
  rm -rf "$probe"
fi

export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "setup: nvcc not found: install the CUDA 13 toolkit (or put its bin/ on PATH)" >&2
  exit 1
fi

# cuobjdump + nvdisasm read the shipped machine code (tests/check_sass.sh).
if ! command -v cuobjdump >/dev/null && [[ ! -x .tools/nvidia/cu13/bin/cuobjdump ]]; then
  echo "setup: installing cuobjdump and nvdisasm into .tools/"
  python3 -m pip install -q --disable-pip-version-check --target .tools \
    nvidia-cuda-cuobjdump==13.2.78 nvidia-cuda-nvdisasm==13.2.78 ||
    echo "setup: could not install cuobjdump; the SASS check will be skipped" >&2
fi
echo "setup: ok ($(nvcc --version | grep -o 'release [0-9.]*'), $(cmake --version | head -1))"
