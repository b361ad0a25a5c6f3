#!/usr/bin/env bash
# A/B of two staged builds (scripts/stage_prebuilt.sh) at free-running
# clocks, as users see them: ROUNDS interleaved rounds (A, B, A, B, ...) of
# `tcgemm bench BENCH_ARGS`, each build's CLI with its own library, cuBLAS
# timed in every run, fresh inputs each round (a new random seed each
# round), L2 flushed as bench does by default. The automatic choice's rows
# only (no --configs all).
#
#   A=.scratch/main B=.scratch/new ROUNDS=3 \
#     BENCH_ARGS="--shape 2048x2048x128 --batch 128 --layout NT --dtype bf16" scripts/device_ab_bench.sh
#
# Writes $OUT/ab_bench_<A|B>_<round>.json (bench's records) and
# $OUT/ab_bench.txt: per row, each build's median over the rounds of its
# median time, its speedup against cuBLAS (median over the rounds), and
# A's time over B's (> 1: B is faster), then the geomean of that column.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/env.sh
OUT=${OUT:-$PWD/out}
A=${A:?A=<staged build dir>}
B=${B:?B=<staged build dir>}
ROUNDS=${ROUNDS:-3}
REPEATS=${REPEATS:-20}
SEED=${SEED:-1234}
BENCH_ARGS=${BENCH_ARGS:---suite rows}
mkdir -p "$OUT"
for dir in "$A" "$B"; do (use_staged "$dir" device_ab_bench.sh) || exit 2; done

for round in $(seq 1 "$ROUNDS"); do
  for tag in A B; do
    dir=$([[ $tag == A ]] && echo "$A" || echo "$B")
    # (A subshell: each build's library first on LD_LIBRARY_PATH for its own CLI only.)
    # shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
    (use_staged "$dir" device_ab_bench.sh && "$tcgemm" bench $BENCH_ARGS --rounds 1 --repeats "$REPEATS" --no-peak \
      --seed $((SEED + round)) --json "$OUT/ab_bench_${tag}_${round}.json") \
      > "$OUT/ab_bench_${tag}_${round}.log" 2>&1 || { tail -20 "$OUT/ab_bench_${tag}_${round}.log"; exit 1; }
  done
done

python3 - "$OUT" "$ROUNDS" > "$OUT/ab_bench.txt" <<'PY'
import json, math, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def rows(tag, r):
    record = json.load(open(f"{out}/ab_bench_{tag}_{r}.json"))
    return {(x["m"], x["n"], x["k"], x["batch"], x["dtype"], x["layout"]): x
            for x in record["results"] if x.get("heuristic") and not x.get("error")}

runs = {(t, r): rows(t, r) for t in "AB" for r in range(1, rounds + 1)}
print("m x n x k (batch) dtype layout | A us | B us | A vs cuBLAS | B vs cuBLAS | A/B | B's kernel")
ratios = []
for key in runs[("A", 1)]:
    got = {t: [runs[(t, r)][key] for r in range(1, rounds + 1) if key in runs[(t, r)]] for t in "AB"}
    if not got["A"] or not got["B"]:
        continue
    us = {t: statistics.median(x["ours_us_median"] for x in got[t]) for t in "AB"}
    speedup = {t: statistics.median(x["speedup"] for x in got[t]) for t in "AB"}
    ratios.append(us["A"] / us["B"])
    m, n, k, batch, dtype, layout = key
    print(f"{m}x{n}x{k} ({batch}) {dtype} {layout} | {us['A']:.1f} | {us['B']:.1f} | {speedup['A']:.3f}x | "
          f"{speedup['B']:.3f}x | {ratios[-1]:.3f} | {got['B'][0]['kernel']}")
if ratios:
    print(f"geomean A/B over {len(ratios)} rows: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
PY
cat "$OUT/ab_bench.txt"
