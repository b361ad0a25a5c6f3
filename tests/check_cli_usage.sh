#!/usr/bin/env bash
# The command line tool refuses bad options with a clear message and exit
# status 2 before it touches a GPU, so this runs on machines without one.
# Usage: check_cli_usage.sh TCGEMM_BINARY   (exit 0: every case as expected)
set -uo pipefail
tcgemm=${1:?usage: check_cli_usage.sh TCGEMM_BINARY}
status=0
# expect_usage_error MESSAGE ARGS...: `tcgemm ARGS` exits 2 and prints MESSAGE.
expect_usage_error() {
  local message=$1
  shift
  local output rc
  output=$("$tcgemm" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 2 ] || ! grep -qF -- "$message" <<< "$output"; then
    echo "FAIL: tcgemm $* -> exit $rc, expected 2 with '$message'; got:"
    head -3 <<< "$output"
    status=1
  else
    echo "ok: tcgemm $*"
  fi
}
expect_usage_error "--flush must be write, read or none" bench --flush sometimes
expect_usage_error "--no-flush and --flush read contradict each other" bench --no-flush --flush read
expect_usage_error "--configs must be auto or all" bench --configs best
expect_usage_error "--only picks among the configurations of --configs all" bench --only swap_ab
expect_usage_error "--shape wants MxNxK with positive sizes" bench --shape 0x16x16
expect_usage_error "--chain times its own fixed chain" bench --chain --shape 16x16x16
expect_usage_error "--repeats wants an integer from 1 to 100000" bench --repeats 0
expect_usage_error "unknown suite 'huge'" bench --suite huge
expect_usage_error "--sm-count wants a number of SMs" bench --sm-count lots
expect_usage_error "--chain times its own fixed chain: it takes no --sm-count" bench --chain --sm-count 8
expect_usage_error "--schedule wants persistent, counted or clc" bench --schedule soon
expect_usage_error "--schedule names counted twice" bench --schedule counted,persistent,counted
expect_usage_error "--chain times its own fixed chain: it takes no --schedule" bench --chain --schedule counted
expect_usage_error "--schedule clc does not bound its grid: it takes no --sm-count" bench --sm-count 100 --schedule clc
expect_usage_error "--chain times its own fixed chain" bench --chain --rounds 3
expect_usage_error "--chain times its own fixed chain" bench --chain --layout TT
expect_usage_error "--repeats wants an integer from 1 to 100000" bench --repeats 100001
expect_usage_error "--rounds wants an integer from 1 to 1000" bench --rounds 1001
expect_usage_error "--seed wants an integer from 0 to 2^40" bench --seed 1099511627777
expect_usage_error "--device wants a device index from 0 to 1023" bench --device 1024
expect_usage_error "--json wants a file name" bench --json ""
expect_usage_error "--plot wants a file name" bench --plot ""
expect_usage_error "--suite decode is named twice" bench --suite decode --suite decode
expect_usage_error "--suite all already holds every suite" bench --suite all --suite large
# check: one run at a time, each option where it applies, --case parsed whole.
expect_usage_error "--soak, --fuzz and --case are separate runs" check --fuzz 10 --soak 10
expect_usage_error "--soak, --fuzz and --case are separate runs" check --case "m=1 n=1 k=1 f16 NN" --fuzz abc
expect_usage_error "--dtype, --layout and --quick choose the sweep's cases" check --fuzz 10 --dtype bf16
expect_usage_error "--dtype, --layout and --quick choose the sweep's cases" check --soak 10 --quick
expect_usage_error "--streams applies to --soak" check --streams 2
expect_usage_error "--all-configs applies to --fuzz and --case" check --all-configs
expect_usage_error "--case wants a case" check --case ""
expect_usage_error "--case wants" check --case "m=1 n=1 k=1 offsets=-5,0,0"
expect_usage_error "--case wants" check --case "m=1 n=1 k=1 offsets=1,2,3junk"
expect_usage_error "--case wants" check --case "m=4294967296 n=1 k=1"
expect_usage_error "--seed wants an integer from 0 to 2^48" check --seed 281474976710657
expect_usage_error "--case wants" check --case "m=4 m=5 n=1 k=1"
expect_usage_error "--case wants" check --case "m=4 n=1 k=1 f16 bf16"
expect_usage_error "--case wants" check --case "m=4 n=1 k=1 NT NN"
expect_usage_error "ldc=8 is shorter than the operand's stored row of 64 elements" check --case "m=4 n=64 k=8 f16 NN ldc=8"
expect_usage_error "lda=4 is shorter than the operand's stored row of 8 elements" check --case "m=4 n=64 k=8 f16 NN lda=4"
expect_usage_error "ldb=8 is shorter than the operand's stored row of 64 elements" check --case "m=4 n=64 k=8 f16 TN ldb=8"
expect_usage_error "ldc=1099511627776 over 8388609 rows is more than 2^40 elements" check --case "m=8388609 n=1 k=1 ldc=1099511627776"
expect_usage_error "--groups wants a number of groups from 1 to 256" check --groups 0
expect_usage_error "--soak draws nothing at random" check --soak 10 --seed 5
# an option given is an option used: refused where the run would drop it, default value or not.
expect_usage_error "--groups needs layouts with A stored K-major (NN, NT): --layout names TN" check --groups 8 --layout NN,TN
expect_usage_error "--batch applies to the sweep" check --fuzz 5 --batch 1
expect_usage_error "--activation and --bias apply to the sweep" check --fuzz 5 --activation none
expect_usage_error "--activation and --bias apply to the sweep" check --case "m=8 n=8 k=8" --bias none
expect_usage_error "lda=0: a leading dimension is at least 1" check --case "m=64 n=64 k=64 lda=0"
expect_usage_error "--case wants" check --case "m=8 n=8 k=8 f16=x"
expect_usage_error "a comma-separated list of distinct ones" check --layout NT,NT
expect_usage_error "a comma-separated list of distinct ones" bench --layout NN,NT,NN
expect_usage_error "--shape 8x8x8 is named twice" bench --shape 8 --shape 8x8x8
expect_usage_error "--json: no directory '/nonexistent/dir' to write" bench --shape 8 --json /nonexistent/dir/x.json
expect_usage_error "--plot: no directory '/nonexistent' to write" bench --shape 8 --plot /nonexistent/x.svg
# bench: nothing accepted that the run would ignore or could not hold.
expect_usage_error "--chain times one dtype" bench --chain --dtype both
expect_usage_error "--chain times its own fixed chain: it takes no --only" bench --chain --only x
expect_usage_error "give a file name ending in .svg" bench --shape 64 --plot x.png
expect_usage_error "needs an operand of 2^44 elements or more" bench --shape 1073741824x1073741824x64 --batch 16
# the command word itself.
expect_usage_error "--version takes no argument" --version foo
expect_usage_error "help takes one command name at most" help bench extra
expect_usage_error "unknown command 'benchh'" --help benchh
exit $status
