#!/usr/bin/env bash
# One call on the GPU machine for the torch integration: build and install the
# `tcgemm` package offline against the installed torch, run every Python test
# (GPU ones included: operators, opcheck, torch.compile, errors, streams, the
# matmul_v2 check, the generated one-file submission), then the per-call
# overhead benchmark. Results land in $OUT:
#   python_build.log   environment, then `pip install` (its tail is printed on failure)
#   python_tests.log   pytest -v, with skip reasons and the slowest tests
#   python_bench.md    bench_overhead.py: leaderboard-style timings vs torch.matmul
#   tp.md              bench_tp.py (two GPUs or more): tensor-parallel layers, TP_ARGS adds arguments
#   torch_SUITE.md     bench_torch.py: kernel time against torch.matmul, per suite
#                      of TORCH_SUITES (default "matmul_v2 decode large"; "" skips)
# The build folder (build-python/) and the compiled submission
# (build-python/torch_extensions/) are reused by the next run on the same machine.
# PYTHON picks the interpreter (default python3); PYTEST_ARGS adds pytest
# arguments (e.g. "-x"), PYTEST_K a -k expression (e.g. "leaderboard");
# BENCH_ARGS adds benchmark arguments; OVERHEAD_BENCH=0 skips the overhead
# benchmark. The install (about 3 minutes on 16 cores) and every test take
# about 9 minutes together; where a command's time is bounded, split the
# tests over two runs (the second reuses the install), e.g.
#   PYTEST_K="not submission_file and not views_and_edges" TORCH_SUITES="" OVERHEAD_BENCH=0
#   PYTEST_K="submission_file or views_and_edges" TORCH_SUITES=""
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT" build-python
PYTHON=${PYTHON:-python3}
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
export TORCH_EXTENSIONS_DIR=${TORCH_EXTENSIONS_DIR:-$PWD/build-python/torch_extensions}
export MAX_JOBS=${MAX_JOBS:-$(nproc)}                        # load_inline's ninja
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}

{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  "$PYTHON" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "abi", torch._C._GLIBCXX_USE_CXX11_ABI)'
  "$PYTHON" -m pip --version
  "$PYTHON" -c 'import scikit_build_core; print("scikit-build-core", scikit_build_core.__version__)'
  cmake --version | head -1
  nvcc --version | tail -1
} > "$OUT/python_build.log" 2>&1
cat "$OUT/python_build.log"

# --no-index: nothing is fetched; --no-build-isolation: the installed torch and
# scikit-build-core are used as they are.
if ! timeout 600 "$PYTHON" -m pip install --no-build-isolation --no-deps --no-index -v . >> "$OUT/python_build.log" 2>&1; then
  echo "pip install failed; the end of $OUT/python_build.log:"
  tail -60 "$OUT/python_build.log"
  exit 1
fi
echo "pip install: ok"
# Import from outside the checkout, as a user would.
if ! (cd /tmp && "$PYTHON" -c 'import tcgemm; print("tcgemm", tcgemm.__version__, tcgemm.__file__, tcgemm.info())') 2>&1 |
  tee -a "$OUT/python_build.log"; then
  echo "import tcgemm failed after the install (see above)"
  exit 1
fi

status=0
# The installed generator (from the sources shipped in the package) must
# write what the checkout's writes.
(cd /tmp && "$PYTHON" -m tcgemm.make_submission "$OLDPWD/build-python/submission.py") || status=1
"$PYTHON" scripts/make_submission.py build-python/submission-checkout.py &&
  cmp build-python/submission.py build-python/submission-checkout.py || { echo "installed and checkout generators differ"; status=1; }
# The standalone nvcc check of the generated CUDA source is for CI; here the
# generated file itself is compiled by load_inline.
timeout 480 "$PYTHON" -m pytest -p no:cacheprovider python/tests -v -rs --durations=15 \
  --deselect python/tests/test_make_submission.py::test_cuda_source_compiles_as_one_unit ${PYTEST_ARGS:-} \
  ${PYTEST_K:+-k "$PYTEST_K"} > "$OUT/python_tests.log" 2>&1 ||
  status=1
grep -E "FAILED|ERROR" "$OUT/python_tests.log" | head -40
tail -20 "$OUT/python_tests.log"

if [[ ${OVERHEAD_BENCH:-1} != 0 ]]; then
  timeout 240 "$PYTHON" python/bench/bench_overhead.py --submission build-python/submission.py ${BENCH_ARGS:-} \
    > "$OUT/python_bench.md" 2>&1 || status=1
  cat "$OUT/python_bench.md"
fi

# Two GPUs or more: the tensor-parallel layers against NCCL + torch (tp.md).
if (( $(nvidia-smi -L | wc -l) >= 2 )); then
  timeout 480 "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node 2 python/bench/bench_tp.py \
    --out "$OUT/tp.md" ${TP_ARGS:-} \
    > "$OUT/tp.log" 2>&1 || { status=1; tail -30 "$OUT/tp.log"; }
  cat "$OUT/tp.md" 2>/dev/null
fi

for suite in ${TORCH_SUITES-matmul_v2 decode large}; do
  timeout 300 "$PYTHON" python/bench/bench_torch.py --suite "$suite" --dtype both > "$OUT/torch_$suite.md" 2>&1 || status=1
  grep -E "^#|geomean" "$OUT/torch_$suite.md"
done
exit $status
