#!/usr/bin/env bash
# API fuzzing (tests/fuzz/api_fuzz.cpp): configures and builds the fuzz target
# with clang (libFuzzer + ASan + UBSan) and runs it for SECONDS with a fixed
# seed. Any crash, sanitizer report or broken contract fails the test and
# leaves the input that caused it in BUILD_DIR (crash-*); replay it with
#   BUILD_DIR/tcgemm_api_fuzz BUILD_DIR/crash-<hash>
#
# usage: run_api_fuzz.sh SOURCE_DIR BUILD_DIR SECONDS
# exit: 0 pass, 1 fail, 77 skip (no clang++ with libFuzzer on this machine)
set -uo pipefail
src=${1:?usage: run_api_fuzz.sh SOURCE_DIR BUILD_DIR SECONDS}
build=${2:?}
seconds=${3:-30}

if ! command -v clang++ >/dev/null; then
  echo "SKIP: clang++ not found (scripts/setup.sh test installs it where it can)"
  exit 77
fi
probe=$(mktemp -d)
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! clang++ -fsanitize=fuzzer "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "SKIP: clang++ cannot link libFuzzer here: $(head -1 "$probe/err")"
  rm -rf "$probe"
  exit 77
fi
rm -rf "$probe"

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$src/tests/fuzz" -B "$build" "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug \
  > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" > "$build.build.log" 2>&1 || { tail -40 "$build.build.log"; exit 1; }

mkdir -p "$build/corpus"
cd "$build"
"$build/tcgemm_api_fuzz" -max_total_time="$seconds" -seed=1 -print_final_stats=1 corpus > fuzz.log 2>&1
status=$?
grep -E "^Done|stat::number_of_executed_units|stat::new_units_added" fuzz.log
if [[ $status -ne 0 ]]; then
  grep -E "api_fuzz:|runtime error|ERROR: AddressSanitizer|SUMMARY|Test unit written" fuzz.log | head -20
  echo "FAIL: the API fuzzer stopped (exit $status); log: $build/fuzz.log"
  exit 1
fi
echo "PASS: no crash, sanitizer report or broken contract in $seconds s"
