#!/usr/bin/env bash
# Reliability runs on the GPU machine, in one call (docs/RELIABILITY.md
# quotes their summaries). Results in $OUT:
#   soak.txt          tcgemm check --soak: SOAK_LAUNCHES launches on SOAK_STREAMS
#                     threads/streams at once, spot-checked, memory growth
#   fuzz.txt          tcgemm check --fuzz FUZZ_CASES --all-configs; the step
#                     prints the run's summary (normwise and element-wise
#                     worst ratios, the cuBLAS fallback's elements beyond the
#                     element-wise bound with repro lines, bit identity) and
#                     the number of failed cases
#   sanitize_<tool>[_<shard>].txt  compute-sanitizer memcheck, racecheck, synccheck and
#                     initcheck over the GPU test suite (run side by side;
#                     SANITIZE_TOOLS picks them, SANITIZE_FILTER narrows the
#                     tests, SANITIZE_SHARDS splits each run over the GPUs,
#                     SANITIZE_ARGS adds compute-sanitizer options). The
#                     default filter leaves out Edges.OutOfDeviceMemory: it
#                     takes all device memory, which the sanitizer needs too.
#                     memcheck, synccheck and initcheck leave cuBLAS's kernels
#                     (the tests' baseline, SANITIZE_EXCLUDE, default nvjet)
#                     uninstrumented: they are most of the time otherwise.
#                     racecheck instruments every kernel (with nvjet excluded
#                     it stops at the first cuBLAS call: "The Sanitizer failed
#                     to handle a hardware exception") and passes when no
#                     hazard names a kernel outside cuBLAS's. Every run must
#                     also pass its tests.
#   hang.txt          a -DTCGEMM_DEBUG_HANGS=ON build (build-dbg, 2 s wait
#                     bound, for DEBUG_ARCHS, default "90a;100a") running the
#                     GPU test that provokes a hang report
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
# wait_with_progress LABEL TOTAL LOG...: while background jobs run, one line
# on stderr rewritten each second: gtest cases finished (OK or FAILED lines in
# the logs) of TOTAL, the rate and the time left; erased when they end.
wait_with_progress() {
  local label=$1 total=$2 start=$SECONDS done elapsed; shift 2
  while [[ -n $(jobs -r) ]]; do
    done=$(cat "$@" 2>/dev/null | grep -cE '^\[ +(OK|FAILED) +\] .*\([0-9]+ ms\)$')
    elapsed=$((SECONDS - start))
    if ((done > 0 && elapsed > 0)); then
      printf '\r%s: %d/%d, %.1f/s, %d s left\033[K' "$label" "$done" "$total" \
        "$(awk -v d="$done" -v e="$elapsed" 'BEGIN { printf "%.1f", d / e }')" $(((total - done) * elapsed / done)) >&2
    else
      printf '\r%s: %d/%d\033[K' "$label" "$done" "$total" >&2
    fi
    sleep 1
  done
  printf '\r\033[K' >&2
}

for step in $STEPS; do
  case $step in
    soak) timeout "$STEP_TIMEOUT" "$tcgemm" check --soak "$SOAK_LAUNCHES" --streams "$SOAK_STREAMS" > "$OUT/soak.txt" 2>&1 || status=1
          tail -3 "$OUT/soak.txt" ;;
    fuzz) timeout "$STEP_TIMEOUT" "$tcgemm" check --fuzz "$FUZZ_CASES" --seed "$FUZZ_SEED" --all-configs > "$OUT/fuzz.txt" 2>&1 || status=1
          # The summary, from its first line to the end (the last lines if the run ended early).
          sed -n '/^fuzz: /,$p' "$OUT/fuzz.txt" | grep . || tail -3 "$OUT/fuzz.txt"
          echo "failed cases: $(grep -c "^FAIL" "$OUT/fuzz.txt")" ;;
    sanitize)
      # Each tool's run may be split into SANITIZE_SHARDS gtest shards, run
      # side by side and spread over the visible GPUs (synccheck over the
      # whole suite takes longer than one call otherwise).
      shards=${SANITIZE_SHARDS:-1}
      gpus=$(nvidia-smi -L | wc -l)
      logs=()
      for tool in $SANITIZE_TOOLS; do
        for ((i = 0; i < shards; i++)); do
          log="$OUT/sanitize_$tool.txt"; ((shards > 1)) && log="$OUT/sanitize_${tool}_$i.txt"
          logs+=("$log")
          exclude=(); [[ $tool != racecheck ]] && exclude=(--kernel-name-exclude "kns=${SANITIZE_EXCLUDE:-nvjet}")
          CUDA_VISIBLE_DEVICES=${SANITIZE_GPU:-$((i % gpus))} GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
            timeout "$STEP_TIMEOUT" compute-sanitizer --tool "$tool" --error-exitcode 3 "${exclude[@]}" ${SANITIZE_ARGS:-} \
            "$tests" --gtest_filter="${SANITIZE_FILTER:-*-Edges.OutOfDeviceMemory}" > "$log" 2>&1 &
        done
      done
      # On a terminal, the shards' progress (tests finished of all the tools'
      # runs, rate, time left) until they end; in a log, nothing.
      if [[ -t 2 ]]; then
        per_tool=$("$tests" --gtest_list_tests --gtest_filter="${SANITIZE_FILTER:-*-Edges.OutOfDeviceMemory}" |
                   grep -c '^  ')
        wait_with_progress sanitize $((per_tool * $(wc -w <<< "$SANITIZE_TOOLS"))) "${logs[@]}"
      fi
      wait
      for log in "${logs[@]}"; do
        echo "$(basename "$log" .txt): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" \
             "$(grep -E '^\[  (PASSED|FAILED) ' "$log" | tr '\n' ' ')" \
             "(last test started: $(grep -E '^\[ RUN' "$log" | tail -1 | cut -c14-))"
        grep -q '^\[  PASSED  \]' "$log" && ! grep -q '^\[  FAILED  \]' "$log" || status=1
        if [[ $log == *racecheck* ]]; then
          races=$(grep -c 'Race reported' "$log"); ours=$(grep 'Race reported' "$log" | grep -vc nvjet)
          echo "  racecheck: $races hazard reports, $ours outside cuBLAS's kernels"
          ((ours == 0)) && ! grep -q 'Internal Sanitizer Error' "$log" || status=1
        else
          grep -q 'ERROR SUMMARY: 0 ' "$log" || status=1
        fi
      done ;;
    hang) if ! BUILD_DIR=build-dbg configure_and_build -DTCGEMM_DEBUG_HANGS=ON -DTCGEMM_HANG_TIMEOUT_MS=2000 \
              "-DTCGEMM_CUDA_ARCHS=${DEBUG_ARCHS:-90a;100a}" \
              > "$OUT/hang.txt" 2>&1; then
            tail -30 "$OUT/hang.txt"; status=1; continue
          fi
          timeout "$STEP_TIMEOUT" build-dbg/tests/tcgemm_gpu_tests --gtest_filter='Hang.*' > "$OUT/hang.txt" 2>&1 || status=1
          tail -15 "$OUT/hang.txt" ;;
    *) echo "unknown step '$step'"; status=1 ;;
  esac
done
exit $status
