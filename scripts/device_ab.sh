#!/usr/bin/env bash
# A/B of kernel time on the GPU machine: the working tree against a base
# tree (a copy of an older commit, e.g. `git archive BASE | tar -x -C .base`,
# copied to the GPU machine with the tree), kernel by kernel, under Nsight Compute.
#
#   BASE=.base SUITE=matmul_v2 ROUNDS=2 scripts/device_ab.sh
#
# Builds both trees (Release, tools only), then runs ROUNDS interleaved
# rounds (base, new, base, new, ...) of `tcgemm bench --suite SUITE
# --no-flush --repeats REPEATS` under `ncu --metrics gpu__time_duration.sum`
# for the kernels matching KERNEL (a regex, default sm90_gemm). ncu locks
# the clocks to base and flushes caches between launches, so the figures
# are comparable across rounds. Writes $OUT/ab_<tree>_<round>.csv (raw) and
# $OUT/ab.txt: per kernel and grid, the median launch time (ns) of each
# round and the new/base ratio of the medians over all rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
BASE=${BASE:-.base}
SUITE=${SUITE:-matmul_v2}
ROUNDS=${ROUNDS:-2}
REPEATS=${REPEATS:-5}
KERNEL=${KERNEL:-sm90_gemm}
mkdir -p "$OUT"
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
JOBS=${JOBS:-$(nproc)}

build() {  # build SOURCE_DIR: the CLI, in SOURCE_DIR/build-ab
  cmake -S "$1" -B "$1/build-ab" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTCGEMM_BUILD_TESTS=OFF \
    -DTCGEMM_BUILD_TOOLS=ON > "$OUT/build.log" 2>&1 &&
    cmake --build "$1/build-ab" -j "$JOBS" >> "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
}
[[ -d $BASE ]] || { echo "device_ab.sh: no base tree at '$BASE' (copy it there with the tree)"; exit 2; }
build "$BASE"
build .
rm -f "$OUT/build.log"

for round in $(seq 1 "$ROUNDS"); do
  for tree in base new; do
    dir=$([[ $tree == base ]] && echo "$BASE" || echo .)
    ncu --kernel-name "regex:$KERNEL" --metrics gpu__time_duration.sum --csv --print-units base \
      "$dir/build-ab/tools/tcgemm" bench --suite "$SUITE" --no-flush --repeats "$REPEATS" \
      > "$OUT/ab_${tree}_${round}.csv" 2> "$OUT/ab_${tree}_${round}.err" || { tail -20 "$OUT/ab_${tree}_${round}.err"; exit 1; }
  done
done
python3 - "$OUT" "$ROUNDS" > "$OUT/ab.txt" <<'PY'
import csv, io, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])

def medians(path):
    text = open(path).read()
    text = text[text.index('"ID"'):]  # skip the tool's own output before the CSV
    times = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["Metric Name"] != "gpu__time_duration.sum":
            continue
        key = (row["Kernel Name"], row["Grid Size"])
        times.setdefault(key, []).append(float(row["Metric Value"].replace(",", "")))
    return {k: statistics.median(v) for k, v in times.items()}

runs = {(t, r): medians(f"{out}/ab_{t}_{r}.csv") for t in ("base", "new") for r in range(1, rounds + 1)}
keys = list(runs[("base", 1)])
print("kernel | grid | " + " | ".join(f"{t}{r}" for r in range(1, rounds + 1) for t in ("base", "new")) + " | new/base")
for k in keys:
    cols, b, n = [], [], []
    for r in range(1, rounds + 1):
        for t in ("base", "new"):
            v = runs[(t, r)].get(k)
            cols.append(f"{v:.0f}" if v is not None else "-")
            if v is not None:
                (b if t == "base" else n).append(v)
    ratio = statistics.median(n) / statistics.median(b) if b and n else float("nan")
    short = k[0].split("<", 1)[-1].split(">(")[0] if "<" in k[0] else k[0]
    print(f"{short[:90]} | {k[1]} | " + " | ".join(cols) + f" | {ratio:.3f}")
PY
cat "$OUT/ab.txt"
