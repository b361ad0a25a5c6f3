#!/usr/bin/env bash
# The first run on a B200 (any sm_100 GPU), in one command. Installs what
# the build and the tests need (scripts/setup.sh test), builds with
# -DTCGEMM_DEBUG_HANGS=ON (every barrier wait bounded: a lost arrival traps
# and names its barrier instead of hanging the GPU) into build-hangs/, then
# runs, in order, stopping at the first failure:
#   1. the cases a review of the sm100 kernel could not settle without a GPU
#      (tests/gpu/test_sm100_first_run.cpp, README "Blackwell (sm_100a) status");
#   2. tcgemm check --quick (every configuration against the references);
#   3. the whole GPU test suite;
# and then, in a release build (build/), tcgemm bench --configs all on the
# large suite (Cluster Launch Control against the persistent schedule).
# Logs go to $OUT (default ./out). On a GPU other than sm_100 the step-1
# tests skip, saying why, and the rest exercise that GPU's family.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
STEP_TIMEOUT=${STEP_TIMEOUT:-900}

bash scripts/setup.sh test || exit 1
export BUILD_DIR=build-hangs
source scripts/env.sh
if ! configure_and_build -DTCGEMM_DEBUG_HANGS=ON > "$OUT/build-hangs.log" 2>&1; then
  tail -50 "$OUT/build-hangs.log"
  exit 1
fi
step() {  # NAME LOG COMMAND...
  local name=$1 log=$2
  shift 2
  echo "== $name"
  timeout "$STEP_TIMEOUT" "$@" > "$log" 2>&1
  local status=$?
  tail -15 "$log"
  if [[ $status -ne 0 ]]; then
    echo "== $name FAILED (status $status; 124: timed out after ${STEP_TIMEOUT} s); full log: $log"
    exit 1
  fi
}
step "first-run cases" "$OUT/first_run.log" "$BUILD_DIR/tests/tcgemm_gpu_tests" --gtest_filter='Sm100FirstRun.*'
step "tcgemm check --quick" "$OUT/check_quick.log" "$BUILD_DIR/tools/tcgemm" check --quick
step "GPU tests" "$OUT/gpu_tests.log" "$BUILD_DIR/tests/tcgemm_gpu_tests"

export BUILD_DIR=build
if ! configure_and_build > "$OUT/build.log" 2>&1; then
  tail -50 "$OUT/build.log"
  exit 1
fi
step "tcgemm bench --suite large --configs all" "$OUT/bench_configs.txt" \
  "$BUILD_DIR/tools/tcgemm" bench --suite large --configs all --json "$OUT/bench_configs.json"
