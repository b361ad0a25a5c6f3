#!/usr/bin/env bash
# Builds tcgemm and runs every test that can run here: host tests (no GPU
# needed), GPU tests (skipped with a message when no Hopper GPU is visible),
# the SASS check (skipped without cuobjdump), the API fuzz test (skipped
# without clang and libFuzzer), then the Python tests: the one-file submission
# generator runs here; the torch operator tests skip without torch and an
# sm_90 GPU (scripts/device_python.sh installs the package and runs them there).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
source scripts/env.sh
configure_and_build -DTCGEMM_BUILD_TESTS=ON  # bench.sh turns them off in the same build dir
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure || status=$?
# ctest names the tests it skipped but not why: print each one's reason.
awk '/^[0-9]+\/[0-9]+ Test: / { name = $3; shown = 0 }
     !shown && name != "" && /^(SKIP: |TCGEMM_GPU_TESTS_SKIPPED: )/ { print "skipped " name ": " $0; shown = 1 }' \
  "$BUILD_DIR/Testing/Temporary/LastTest.log" 2>/dev/null || true
[[ $status -eq 0 ]] || exit $status

python3 -m pytest -p no:cacheprovider -q -rs python/tests || status=$?
# 5: pytest collected nothing (every module skipped), which is not a failure here.
[[ $status -eq 0 || $status -eq 5 ]] || exit $status
