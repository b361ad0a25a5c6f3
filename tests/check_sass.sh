#!/usr/bin/env bash
# SASS checks on the built library:
#   1. `cuobjdump -res-usage` lists the sm90 GEMM kernels, and no kernel in the
#      library has a stack frame or local memory (spills and dynamically
#      indexed register arrays both land there and cost the kernel its speed);
#   2. `cuobjdump -sass` shows HGMMA (wgmma) instructions in every sm90 GEMM
#      kernel: a kernel built for plain sm_90 instead of sm_90a, or one whose
#      MMA loop was compiled away, has none.
# ptxas -Werror already fails the build on spill and serialized-wgmma
# warnings; this looks at the shipped machine code itself.
#
# usage: check_sass.sh LIBRARY [CUDA_BIN_DIR]
# exit: 0 pass, 1 fail, 77 skip (no cuobjdump on this machine)
set -uo pipefail

lib=${1:?usage: check_sass.sh LIBRARY [CUDA_BIN_DIR]}
hint=${2:-}

# The toolkit's bin/, then PATH, then the copy scripts/setup.sh installs from
# PyPI when the toolkit has none.
here=$(cd "$(dirname "$0")" && pwd)
cuobjdump=""
for candidate in "${hint:+$hint/cuobjdump}" "$(command -v cuobjdump 2>/dev/null)" /usr/local/cuda/bin/cuobjdump \
  "$here/../.tools/nvidia/cu13/bin/cuobjdump"; do
  if [[ -n $candidate && -x $candidate ]]; then
    cuobjdump=$candidate
    break
  fi
done
if [[ -z $cuobjdump ]]; then
  echo "SKIP: cuobjdump not found (looked in '${hint}', PATH, /usr/local/cuda/bin and .tools/)"
  exit 77
fi
if [[ ! -f $lib ]]; then
  echo "FAIL: library '$lib' does not exist"
  exit 1
fi
echo "checking $lib with $cuobjdump"

demangle() {
  if command -v c++filt >/dev/null 2>&1; then c++filt; else cat; fi
}

status=0

# ---------------------------------------------------------------------------
# 1. Resource usage. Each kernel appears as
#      Function NAME:
#       REG:168 STACK:0 SHARED:0 LOCAL:0 CONSTANT[0]:... (one line)
# ---------------------------------------------------------------------------
if ! res=$("$cuobjdump" -res-usage "$lib" 2>&1); then
  echo "FAIL: cuobjdump -res-usage failed:"
  echo "$res"
  exit 1
fi
usage=$(awk '
  /^[[:space:]]*Function [^ ]+:[[:space:]]*$/ { name = $2; sub(/:$/, "", name); next }
  /STACK:/ && name != "" {
    reg = "?"; stack = "?"; local_ = "?"
    for (i = 1; i <= NF; i++) {
      split($i, kv, ":")
      if (kv[1] == "REG") reg = kv[2]
      if (kv[1] == "STACK") stack = kv[2]
      if (kv[1] == "LOCAL") local_ = kv[2]
    }
    print name, reg, stack, local_
    name = ""
  }' <<<"$res")

if [[ -z $usage ]]; then
  echo "FAIL: cuobjdump -res-usage reported no kernels in $lib"
  status=1
fi

num_gemm=0
while read -r name reg stack local_; do
  [[ -z ${name:-} ]] && continue
  pretty=$(demangle <<<"$name")
  [[ $name == *sm90_gemm* ]] && num_gemm=$((num_gemm + 1))
  if [[ $stack != 0 || $local_ != 0 ]]; then
    echo "FAIL: STACK=$stack LOCAL=$local_ (REG=$reg) in $pretty"
    status=1
  else
    echo "ok:   STACK=0 LOCAL=0 REG=$reg  $pretty"
  fi
done <<<"$usage"

if [[ $num_gemm -eq 0 ]]; then
  echo "FAIL: no kernel named *sm90_gemm* in the resource usage of $lib"
  status=1
else
  echo "found $num_gemm sm90_gemm kernel(s) in the resource usage"
fi

# ---------------------------------------------------------------------------
# 2. HGMMA in each sm90 GEMM kernel. SASS listings start each kernel with
#      Function : NAME
# ---------------------------------------------------------------------------
if ! sass=$("$cuobjdump" -sass "$lib" 2>&1); then
  echo "FAIL: cuobjdump -sass failed:"
  echo "$sass" | head -50
  exit 1
fi
hgmma=$(awk '
  /Function : / { name = $NF; if (name ~ /sm90_gemm/) seen[name] = 1; next }
  /HGMMA/ && name ~ /sm90_gemm/ { count[name]++ }
  END { for (n in seen) print n, (n in count) ? count[n] : 0 }' <<<"$sass")

if [[ -z $hgmma ]]; then
  echo "FAIL: no sm90_gemm kernel in the SASS of $lib"
  status=1
fi
while read -r name count; do
  [[ -z ${name:-} ]] && continue
  pretty=$(demangle <<<"$name")
  if [[ $count -eq 0 ]]; then
    echo "FAIL: no HGMMA instruction in $pretty"
    status=1
  else
    echo "ok:   $count HGMMA instruction(s) in $pretty"
  fi
done <<<"$hgmma"

if [[ $status -eq 0 ]]; then echo "PASS"; else echo "FAILED"; fi
exit $status
