#!/usr/bin/env bash
# Builds tcgemm and runs every test: host tests (no GPU needed), GPU tests
# (skipped with a message when no Hopper GPU is visible) and the compile checks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
configure_and_build
ctest --test-dir "$BUILD_DIR" --output-on-failure
