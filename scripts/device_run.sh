#!/usr/bin/env bash
# One call on the GPU machine: configure, build with all cores, run the tests
# (GPU tests included), a correctness sweep, and the benchmarks. Results land
# in $OUT (set OUT to a folder to keep them), at most 8 files:
#   env.txt        nvidia-smi, tcgemm info
#   ctest.log      host, GPU and SASS tests (PREBUILT: the host and GPU test programs)
#   check.log      tcgemm check (sweep against the reference and cuBLAS), then
#                  the same sweep as M-grouped calls (check --groups 8)
#   large.txt/json tcgemm bench --suite large  (fp16 and bf16)
#   mv2.txt/json   tcgemm bench --suite matmul_v2
#   decode.txt/json, llm.txt/json   (steps "decode", "llm": not in the default
#                  STEPS) the model layers at M = 1..64 / 1..4096, bf16 and fp16
#   bmm.txt/json   (step "bmm") strided batches of attention-like products (the
#                  cases of python/bench/bench_torch.py --suite bmm), bf16
#   fused.txt      (step "fused") tcgemm check with a fused epilogue (gelu,
#                  fp32 bias), then the large suite with gelu + bias (bf16): the
#                  epilogue's cost against the same call without it
#   swapnn.txt/json (step "swapnn") the swapped kernel's configurations on the
#                  mid-size products with B stored K x N (NN), beside the
#                  automatic choice: the data for its NN factor
#   shortk.txt/json (step "shortk") every configuration on products the
#                  swapped kernel takes at 129-640 rows, at a short K (1024,
#                  2048), both layouts of B: whether its rule, fitted at K =
#                  4096-8192, holds there
#   smcount.txt    (step "smcount") the large suite (bf16) on at most 124 and
#                  116 SMs (--sm-count): what bounding a product costs
# STEPS (default "check test large mv2") picks the parts, in order; BENCH_ARGS
# adds arguments to every bench (e.g. "--configs all"). Each step is bounded by
# STEP_TIMEOUT seconds (default 300), and a failing `check` (the quickest
# sign of a broken or hanging kernel) stops the run before the long steps.
# A second run on the same machine reuses the build folder.
#
# PREBUILT=DIR runs binaries built elsewhere instead of configuring and
# building here (about 6 minutes of the GPU machine's time): scripts/stage_prebuilt.sh
# copies libtcgemm, the CLI and the two test programs of a build into one
# ignored folder, to be copied to the GPU machine with the tree. The `test` step then runs
# the host and GPU test programs themselves (ctest's other entries need no
# GPU and run in CI).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
STEPS=${STEPS:-check test large mv2}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
BENCH_ARGS=${BENCH_ARGS:-}
export BUILD_DIR=${BUILD_DIR:-build-device}
source scripts/env.sh

{ nvidia-smi; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; } > "$OUT/env.txt" 2>&1
PREBUILT=${PREBUILT:-}
if [[ -n $PREBUILT ]]; then
  use_staged "$PREBUILT" device_run.sh || exit 2
  cat "$PREBUILT/STAGED" >> "$OUT/env.txt" 2>&1
else
  if ! configure_and_build > "$OUT/build.log" 2>&1; then
    tail -50 "$OUT/build.log"
    exit 1
  fi
  rm -f "$OUT/build.log"
  tcgemm="$BUILD_DIR/tools/tcgemm"
fi
"$tcgemm" info >> "$OUT/env.txt" 2>&1

run_tests() {  # ctest over the build, or the staged test programs
  if [[ -n $PREBUILT ]]; then
    "$PREBUILT/tcgemm_host_tests" --gtest_brief=1 && "$PREBUILT/tcgemm_gpu_tests" --gtest_brief=1
  else
    ctest --test-dir "$BUILD_DIR" --output-on-failure
  fi
}
export PREBUILT BUILD_DIR LD_LIBRARY_PATH
export -f run_tests  # (for `timeout ... bash -c run_tests`)

status=0
for step in $STEPS; do
  case $step in
    test)  timeout "$STEP_TIMEOUT" bash -c run_tests > "$OUT/ctest.log" 2>&1 || status=1
           tail -5 "$OUT/ctest.log" ;;
    check) if ! { timeout "$STEP_TIMEOUT" "$tcgemm" check && timeout "$STEP_TIMEOUT" "$tcgemm" check --groups 8; } \
             > "$OUT/check.log" 2>&1; then
             tail -20 "$OUT/check.log"; exit 1
           fi
           grep -E "^check:" "$OUT/check.log" ;;
    large) timeout "$STEP_TIMEOUT" "$tcgemm" bench --suite large --dtype both --json "$OUT/large.json" $BENCH_ARGS \
             > "$OUT/large.txt" 2>&1 || status=1
           cat "$OUT/large.txt" ;;
    mv2)   timeout "$STEP_TIMEOUT" "$tcgemm" bench --suite matmul_v2 --json "$OUT/mv2.json" $BENCH_ARGS \
             > "$OUT/mv2.txt" 2>&1 || status=1
           cat "$OUT/mv2.txt" ;;
    fused) # (Each command's status on its own: a { } group's is its last command's.)
           timeout "$STEP_TIMEOUT" "$tcgemm" check --activation gelu --bias f32 > "$OUT/fused_check.txt" 2>&1 ||
             status=1
           tail -2 "$OUT/fused_check.txt"
           timeout "$STEP_TIMEOUT" "$tcgemm" bench --suite large --dtype bf16 --activation gelu --bias same \
             --rounds 2 --repeats 10 $BENCH_ARGS > "$OUT/fused.txt" 2>&1 || status=1
           sed -n '/fused epilogue cost/,$p' "$OUT/fused.txt" ;;
    swapnn)
           shapes=()
           for s in 3500x3072x8192 700x6144x8192 900x11008x4096 900x7168x8192 2500x1024x4096 1600x2048x4096 \
                    700x7168x3584 288x14336x4096; do shapes+=(--shape "$s"); done
           timeout "$STEP_TIMEOUT" "$tcgemm" bench "${shapes[@]}" --layout NN --dtype bf16 --configs all \
             --only swap_ab --rounds 2 --json "$OUT/swapnn.json" $BENCH_ARGS > "$OUT/swapnn.txt" 2>&1 || status=1
           tail -40 "$OUT/swapnn.txt" ;;
    shortk)
           shapes=()
           for s in 200x57344x1024 200x14336x1024 160x14336x1024 300x28672x1024 520x11008x1024 \
                    200x57344x2048 300x14336x2048 520x4096x2048; do shapes+=(--shape "$s"); done
           timeout "$STEP_TIMEOUT" "$tcgemm" bench "${shapes[@]}" --layout NT,NN --dtype bf16 --configs all \
             --rounds 2 --json "$OUT/shortk.json" $BENCH_ARGS > "$OUT/shortk.txt" 2>&1 || status=1
           sed -n '/heuristic vs best/,$p' "$OUT/shortk.txt" ;;
    smcount)
           for sms in 124 116; do
             timeout "$STEP_TIMEOUT" "$tcgemm" bench --suite large --dtype bf16 --sm-count "$sms" $BENCH_ARGS \
               || status=1
           done > "$OUT/smcount.txt" 2>&1
           grep -E "geomean|sm-count|SMs" "$OUT/smcount.txt" ;;
    bmm)   # #15's attention-like batches, the cases of `bench_torch.py --suite bmm`, bf16, against
           # cuBLAS's strided batched GEMM as torch configures it: QK^T (NT) and PV (NN) at 32 and
           # 128 problems, squares at 32. One record, bmm.json.
           rm -f "$OUT"/bmm_part*.json
           part=0
           for spec in "32 NT 128x128x128 512x512x128 2048x2048x128" "32 NN 128x128x128 512x128x512 2048x128x2048" \
                       "128 NT 128x128x128 512x512x128 2048x2048x128" "128 NN 128x128x128 512x128x512 2048x128x2048" \
                       "32 NN,NT 128x128x128 512x512x512 1024x1024x1024 2048x2048x2048"; do
             read -r batch layout rest <<< "$spec"
             shapes=()
             for s in $rest; do shapes+=(--shape "$s"); done
             part=$((part + 1))
             timeout "$STEP_TIMEOUT" "$tcgemm" bench "${shapes[@]}" --batch "$batch" --layout "$layout" --dtype bf16 \
               --json "$OUT/bmm_part$part.json" $BENCH_ARGS || status=1
           done > "$OUT/bmm.txt" 2>&1
           python3 - "$OUT" <<'PY' || status=1
import glob, json, math, sys
parts = sorted(glob.glob(f"{sys.argv[1]}/bmm_part*.json"))
record = json.load(open(parts[0]))
for p in parts[1:]:
    record["results"] += json.load(open(p))["results"]
json.dump(record, open(f"{sys.argv[1]}/bmm.json", "w"), indent=1)
speedups = [r["speedup"] for r in record["results"] if r.get("heuristic") and r.get("speedup")]
if speedups:
    geomean = math.exp(sum(map(math.log, speedups)) / len(speedups))
    print(f"bmm: geomean speedup {geomean:.3f}x over {len(speedups)} cases, lowest {min(speedups):.3f}x, "
          f"{sum(s < 1.0 for s in speedups)} under 1.0x")
PY
           rm -f "$OUT"/bmm_part*.json ;;
    decode|llm)
           timeout "$STEP_TIMEOUT" "$tcgemm" bench --suite "$step" --dtype both --json "$OUT/$step.json" $BENCH_ARGS \
             > "$OUT/$step.txt" 2>&1 || status=1
           grep -E "geomean|peak" "$OUT/$step.txt" ;;
    *)     echo "unknown step '$step'"; status=1 ;;
  esac
done
exit $status
