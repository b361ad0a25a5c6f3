#!/usr/bin/env bash
# Nsight Compute figures for our kernel and cuBLAS's, side by side, on the
# GPU machine: per shape, one warm-up and one timed call of each (tcgemm bench
# --repeats 1), every kernel profiled (the summary keeps the GEMMs) with the sections below, L2 flushed
# by ncu before each (--cache-control all), clocks at ncu's default (locked to
# base, so the two kernels are compared at the same clock), or free-running
# with CLOCKS=none (as users run them: a write-bound kernel's balance of SM
# work and DRAM traffic differs there, docs/PERF.md part 21).
# Writes $OUT/ncu_raw.tar.gz (per shape: raw metrics, one row per kernel) and
# $OUT/ncu_summary.txt (the figures docs/PERF.md quotes: per kernel, the median and range over
# its launches, then each launch).
# SHAPES (default below), DTYPE (f16), LAYOUT (NN) and BATCH (1: plain calls; a list of
# counts: each shape as a strided batch of that many problems, `bench --batch`, its files
# named BATCHxSHAPE) pick the cases, BENCH_ARGS adds bench arguments (forced
# configurations: below); the build is reused
# from scripts/device_run.sh (BUILD_DIR, default build-device), or PREBUILT=DIR
# runs a staged one (scripts/stage_prebuilt.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
SHAPES=${SHAPES:-128x128x128 1024x1024x1024 4096x5120x4096 16384x8192x1024 8192x8192x8192}
DTYPE=${DTYPE:-f16}
LAYOUT=${LAYOUT:-NN}
BATCH=${BATCH:-1}
CLOCKS=${CLOCKS:-base}  # ncu --clock-control: base (locked) or none (free-running)
# KERNELS: a regex of the kernel names to profile (default: every kernel; e.g.
# "sm90_gemm|nvjet" leaves out the bench's input, check and reference kernels).
KERNELS=${KERNELS:-}
# BENCH_ARGS: more arguments for `tcgemm bench`, split into words as the shell splits a
# command line (quotes group), e.g. '--configs all --only "block_n=256 cluster_m=1"' to
# profile forced configurations beside the automatic choice.
eval "bench_args=(${BENCH_ARGS:-})"
export BUILD_DIR=${BUILD_DIR:-build-device}
source scripts/env.sh
PREBUILT=${PREBUILT:-}
if [[ -n $PREBUILT ]]; then
  use_staged "$PREBUILT" device_profile.sh || exit 2
else
  if [ ! -x "$BUILD_DIR/tools/tcgemm" ] && ! configure_and_build > "$OUT/build.log" 2>&1; then
    tail -50 "$OUT/build.log"
    exit 1
  fi
  tcgemm="$BUILD_DIR/tools/tcgemm"
fi
# shellcheck disable=SC2054  # (the metrics are one comma-separated argument)
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis
          --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats
          --metrics dram__bytes_read.sum,dram__bytes_write.sum)
[[ -z $KERNELS ]] || sections+=(--kernel-name "regex:$KERNELS")
status=0
for batch in $BATCH; do
  for shape in $SHAPES; do
    case=$shape
    [[ $batch == 1 ]] || case=${batch}x$shape
    timeout 300 ncu --cache-control all --clock-control "$CLOCKS" "${sections[@]}" --csv --page raw --log-file "$OUT/ncu_$case.csv" \
      "$tcgemm" bench --shape "$shape" --dtype "$DTYPE" --layout "$LAYOUT" --batch "$batch" --repeats 1 --no-flush \
      "${bench_args[@]}" > "$OUT/ncu_$case.log" 2>&1 || { status=1; echo "ncu failed for $case"; tail -20 "$OUT/ncu_$case.log"; }
  done
done
# Per kernel, the median and range over its launches; then every launch.
{ python3 scripts/ncu_summary.py --ranges "$OUT"/ncu_*.csv && python3 scripts/ncu_summary.py "$OUT"/ncu_*.csv; } \
  > "$OUT/ncu_summary.txt" 2>&1 || status=1
cat "$OUT/ncu_summary.txt"
# Few files come back from the machine: the raw logs travel as one archive.
(cd "$OUT" && tar czf ncu_raw.tar.gz ncu_*.csv ncu_*.log && rm -f ncu_*.csv ncu_*.log)
exit $status
