#!/usr/bin/env bash
# The main job: set up, build, and benchmark tcgemm against cuBLAS on this GPU
# (`tcgemm bench` with its default suite; extra arguments go to tcgemm bench,
# e.g. --suite matmul_v2 or --shape 4096x4096x4096 --dtype bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
# No GPU, no benchmark: said before minutes of building. Where nvidia-smi is
# missing, no GPU device node (/dev/nvidiaN; WSL: /dev/dxg) means none either.
no_gpu() {
  echo "bench.sh: no NVIDIA GPU is visible ($1): the benchmark needs one; scripts/test.sh runs the tests" \
       "that need none" >&2
  exit 2
}
if command -v nvidia-smi >/dev/null; then
  nvidia-smi -L > /dev/null 2>&1 || no_gpu "nvidia-smi -L"
elif ! compgen -G "/dev/nvidia[0-9]*" > /dev/null && [ ! -e /dev/dxg ]; then
  no_gpu "no nvidia-smi and no /dev/nvidia0"
fi
bash scripts/setup.sh bench
source scripts/env.sh
configure_and_build -DTCGEMM_BUILD_TESTS=OFF -DTCGEMM_BUILD_PYTHON=OFF  # test.sh may have turned it on
"$BUILD_DIR/tools/tcgemm" info
"$BUILD_DIR/tools/tcgemm" bench "$@"
