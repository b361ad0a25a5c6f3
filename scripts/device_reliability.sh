#!/usr/bin/env bash
# Reliability runs on the GPU machine, in one call (docs/RELIABILITY.md
# quotes their summaries). Results in $OUT:
#   soak.txt          tcgemm check --soak: SOAK_LAUNCHES launches on SOAK_STREAMS
#                     threads/streams at once, spot-checked, memory growth
#   fuzz.txt          tcgemm check --fuzz FUZZ_CASES --all-configs
#   sanitize_<tool>.txt  compute-sanitizer memcheck, racecheck, synccheck and
#                     initcheck over the GPU test suite (run side by side;
#                     SANITIZE_TOOLS picks them, SANITIZE_FILTER narrows the
#                     tests, for the slow tools)
#   hang.txt          a -DTCGEMM_DEBUG_HANGS=ON build (build-dbg, 2 s wait
#                     bound) running the GPU test that provokes a hang report
# STEPS (default "soak fuzz sanitize hang") picks the parts; each is bounded
# by STEP_TIMEOUT seconds (default 240).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
STEPS=${STEPS:-soak fuzz sanitize hang}
SANITIZE_TOOLS=${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}
STEP_TIMEOUT=${STEP_TIMEOUT:-240}
SOAK_LAUNCHES=${SOAK_LAUNCHES:-1000000}
SOAK_STREAMS=${SOAK_STREAMS:-4}
FUZZ_CASES=${FUZZ_CASES:-10000}
FUZZ_SEED=${FUZZ_SEED:-1000}
export BUILD_DIR=${BUILD_DIR:-build-device}
source scripts/env.sh
if ! configure_and_build > "$OUT/build.log" 2>&1; then
  tail -50 "$OUT/build.log"
  exit 1
fi
rm -f "$OUT/build.log"
tcgemm="$BUILD_DIR/tools/tcgemm"
tests="$BUILD_DIR/tests/tcgemm_gpu_tests"
status=0
for step in $STEPS; do
  case $step in
    soak) timeout "$STEP_TIMEOUT" "$tcgemm" check --soak "$SOAK_LAUNCHES" --streams "$SOAK_STREAMS" > "$OUT/soak.txt" 2>&1 || status=1
          tail -3 "$OUT/soak.txt" ;;
    fuzz) timeout "$STEP_TIMEOUT" "$tcgemm" check --fuzz "$FUZZ_CASES" --seed "$FUZZ_SEED" --all-configs > "$OUT/fuzz.txt" 2>&1 || status=1
          grep -v "^ \|^FAIL" "$OUT/fuzz.txt" | tail -2; grep -c "^FAIL" "$OUT/fuzz.txt" ;;
    sanitize)
      for tool in $SANITIZE_TOOLS; do
        filter="${SANITIZE_FILTER:-*}"
        timeout "$STEP_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 3 \
          "$tests" --gtest_filter="$filter" > "$OUT/sanitize_$tool.txt" 2>&1 &
      done
      wait
      for tool in $SANITIZE_TOOLS; do
        echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize_$tool.txt" | tail -1)" \
             "$(grep -E '^\[  (PASSED|FAILED) ' "$OUT/sanitize_$tool.txt" | tr '\n' ' ')"
        grep -qE '(ERROR|RACECHECK) SUMMARY: 0 ' "$OUT/sanitize_$tool.txt" || status=1
      done ;;
    hang) if ! BUILD_DIR=build-dbg configure_and_build -DTCGEMM_DEBUG_HANGS=ON -DTCGEMM_HANG_TIMEOUT_MS=2000 \
              > "$OUT/hang.txt" 2>&1; then
            tail -30 "$OUT/hang.txt"; status=1; continue
          fi
          timeout "$STEP_TIMEOUT" build-dbg/tests/tcgemm_gpu_tests --gtest_filter='Hang.*' > "$OUT/hang.txt" 2>&1 || status=1
          tail -15 "$OUT/hang.txt" ;;
    *) echo "unknown step '$step'"; status=1 ;;
  esac
done
exit $status
