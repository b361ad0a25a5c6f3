#!/usr/bin/env bash
# The main job: set up, build, and benchmark tcgemm against cuBLAS on this GPU
# (`tcgemm bench` with its default suite; extra arguments go to tcgemm bench,
# e.g. --suite matmul_v2 or --shape 4096x4096x4096 --dtype bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh bench
source scripts/env.sh
configure_and_build -DTCGEMM_BUILD_TESTS=OFF
"$BUILD_DIR/tools/tcgemm" info
"$BUILD_DIR/tools/tcgemm" bench "$@"
