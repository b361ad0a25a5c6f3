#!/usr/bin/env bash
# The main job: set up, build, and benchmark tcgemm against cuBLAS on this GPU
# (`tcgemm bench` with its default suite; extra arguments go to tcgemm bench,
# e.g. --suite matmul_v2 or --shape 4096x4096x4096 --dtype bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
# No GPU, no benchmark: said before minutes of building (where nvidia-smi is
# missing, tcgemm info says it after the build).
if command -v nvidia-smi >/dev/null && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "bench.sh: no NVIDIA GPU is visible (nvidia-smi -L): the benchmark needs one; scripts/test.sh runs the tests" \
       "that need none" >&2
  exit 2
fi
bash scripts/setup.sh bench
source scripts/env.sh
configure_and_build -DTCGEMM_BUILD_TESTS=OFF -DTCGEMM_BUILD_PYTHON=OFF  # test.sh may have turned it on
"$BUILD_DIR/tools/tcgemm" info
"$BUILD_DIR/tools/tcgemm" bench "$@"
