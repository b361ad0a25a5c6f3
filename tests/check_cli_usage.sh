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
expect_usage_error "--repeats wants a positive integer" bench --repeats 0
expect_usage_error "unknown suite 'huge'" bench --suite huge
expect_usage_error "--sm-count wants a number of SMs" bench --sm-count lots
expect_usage_error "--chain times its own fixed chain: it takes no --sm-count" bench --chain --sm-count 8
exit $status
