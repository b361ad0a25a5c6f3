#!/usr/bin/env bash
# SASS checks on the built library:
#   1. `cuobjdump -res-usage` lists the GEMM kernels of every family built,
#      and no kernel in the library has a stack frame or local memory (spills
#      and dynamically indexed register arrays both land there and cost the
#      kernel its speed);
#   2. `cuobjdump -sass` shows the family's tensor-core instructions in every
#      GEMM kernel: a kernel built for plain sm_90/sm_100 instead of the "a"
#      target, or one whose MMA loop was compiled away, has none.
#      sm90_gemm:  HGMMA (wgmma).
#      sm100_gemm: UTCHMMA.2CTA (tcgen05.mma.cta_group::2) in the pair
#                  kernels (CTA group 2), UTCHMMA (cta_group::1) in the
#                  single-CTA ones, UTCBAR (tcgen05.commit), LDTM
#                  (tcgen05.ld), UTMALDG (TMA load), UTMASTG (TMA store; the
#                  single-CTA tiles narrower than 64 and the swapped tiles
#                  store with STG instead, the swapped ones after SHFL.BFLY,
#                  and every single-CTA kernel has STG), and
#                  in the Cluster Launch Control kernels UGETNEXTWORKID
#                  (clusterlaunchcontrol.try_cancel);
#   3. in every pair sm100_gemm kernel the tensor-memory allocation
#      (UTCATOMSWS.2CTA.FIND_AND_SET, tcgen05.alloc.cta_group::2) comes after
#      the first cluster barrier wait (UCGABAR_WAIT): the peer CTA must have
#      launched before the pair allocates (src/sm100/tmem_allocator.cuh);
#   4. with PTX_ARCH (the library, not the one-file submission): the scale
#      and reference kernels, both dtypes, carry portable PTX of that
#      architecture, which the driver compiles for a GPU no family is built
#      for, so that calls there reach the cuBLAS fallback.
# ptxas -Werror already fails the build on spill and serialized-wgmma
# warnings; this looks at the shipped machine code itself.
#
# usage: check_sass.sh LIBRARY [CUDA_BIN_DIR] [ARCHS] [PTX_ARCH]   (ARCHS e.g. "90a;100a", PTX_ARCH e.g. 80)
# exit: 0 pass, 1 fail, 77 skip (no cuobjdump on this machine)
set -uo pipefail

lib=${1:?usage: check_sass.sh LIBRARY [CUDA_BIN_DIR]}
hint=${2:-}
archs=${3:-90a}
ptx_arch=${4:-}
families=()
[[ ";$archs;" == *";90a;"* ]] && families+=(sm90_gemm)
[[ ";$archs;" == *";100a;"* ]] && families+=(sm100_gemm)

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

declare -A num_gemm
while read -r name reg stack local_; do
  [[ -z ${name:-} ]] && continue
  pretty=$(demangle <<<"$name")
  for f in "${families[@]}"; do
    [[ $name == *"$f"* ]] && num_gemm[$f]=$((${num_gemm[$f]:-0} + 1))
  done
  if [[ $stack != 0 || $local_ != 0 ]]; then
    echo "FAIL: STACK=$stack LOCAL=$local_ (REG=$reg) in $pretty"
    status=1
  else
    echo "ok:   STACK=0 LOCAL=0 REG=$reg  $pretty"
  fi
done <<<"$usage"

for f in "${families[@]}"; do
  if [[ ${num_gemm[$f]:-0} -eq 0 ]]; then
    echo "FAIL: no kernel named *$f* in the resource usage of $lib"
    status=1
  else
    echo "found ${num_gemm[$f]} $f kernel(s) in the resource usage"
  fi
done

# ---------------------------------------------------------------------------
# 2. Tensor-core instructions in each GEMM kernel. SASS listings start each
#    kernel with "Function : NAME"; count_in FAMILY PATTERN prints
#    "NAME COUNT" for every kernel of the family.
# ---------------------------------------------------------------------------
# (The listing passes 1 GiB with both families built: it goes to a file,
# which bash's variables and here-strings do not hold reliably at that size.)
sass=$(mktemp "${TMPDIR:-/tmp}/tcgemm_sass.XXXXXX")
trap 'rm -f "$sass"' EXIT
if ! "$cuobjdump" -sass "$lib" > "$sass" 2>&1; then
  echo "FAIL: cuobjdump -sass failed:"
  head -50 "$sass"
  exit 1
fi
count_in() {
  awk -v fam="$1" -v pat="$2" '
    /Function : / { name = $NF; if (index(name, fam)) seen[name] = 1; next }
    index(name, fam) && $0 ~ pat { count[name]++ }
    END { for (n in seen) print n, (n in count) ? count[n] : 0 }' "$sass"
}
require() {  # FAMILY PATTERN LABEL [only kernels whose demangled name matches this regex] [skip those matching this one]
  local family=$1 pattern=$2 label=$3 only=${4:-} skip=${5:-}
  local counts
  counts=$(count_in "$family" "$pattern")
  if [[ -z $counts ]]; then
    echo "FAIL: no $family kernel in the SASS of $lib"
    status=1
    return
  fi
  local matched=0
  while read -r name count; do
    [[ -z ${name:-} ]] && continue
    pretty=$(demangle <<<"$name")
    [[ -n $only && ! $pretty =~ $only ]] && continue
    [[ -n $skip && $pretty =~ $skip ]] && continue
    matched=$((matched + 1))
    if [[ $count -eq 0 ]]; then
      echo "FAIL: no $label instruction in $pretty"
      status=1
    else
      echo "ok:   $count $label in $pretty"
    fi
  done <<<"$counts"
  # A filter that names no kernel checks nothing: the kernels' names have
  # changed under it.
  if [[ $matched -eq 0 ]]; then
    echo "FAIL: the $label check matched no $family kernel (filter '${only}')"
    status=1
  fi
}
# sm100_gemm's CTA group follows its schedule among its template arguments:
# the pair and the single-CTA kernels by name.
sm100_pair='[(]tcgemm::(abi_[0-9]+::)?Schedule[)][0-9]+, 2, '
sm100_single='[(]tcgemm::(abi_[0-9]+::)?Schedule[)][0-9]+, 1, '
for f in "${families[@]}"; do
  case $f in
    sm90_gemm) require sm90_gemm 'HGMMA' HGMMA ;;
    sm100_gemm)
      require sm100_gemm 'UTCHMMA[.]2CTA' UTCHMMA.2CTA "$sm100_pair"
      require sm100_gemm 'UTCHMMA' UTCHMMA "$sm100_single"
      require sm100_gemm 'UTCBAR' UTCBAR
      require sm100_gemm 'LDTM' LDTM
      require sm100_gemm 'UTMALDG' UTMALDG
      # Tiles narrower than one 64-column panel, and the swapped tiles (SWAP_AB, the last template
      # argument: each thread stores one of C's columns), store C from registers (STG), the others by TMA.
      narrow='^void tcgemm::sm100::sm100_gemm<[^,]+, (8|16|32|40|48), '
      swapped=', true>[(]'
      require sm100_gemm 'UTMASTG' UTMASTG '' "$narrow|$swapped"
      require sm100_gemm 'SHFL[.]BFLY' SHFL.BFLY "$swapped"
      require sm100_gemm 'STG[.]E' STG "$sm100_single"
      require sm100_gemm 'UGETNEXTWORKID' UGETNEXTWORKID '[(]tcgemm::(abi_[0-9]+::)?Schedule[)]2' ;;
  esac
done

# ---------------------------------------------------------------------------
# 3. sm100: the first tensor-memory allocation after the first cluster
#    barrier wait, in listing order (the allocation is straight-line code at
#    the kernel's start; the barrier's out-of-line copies come later).
# ---------------------------------------------------------------------------
if [[ " ${families[*]} " == *" sm100_gemm "* ]]; then
  order=$(awk '
    /Function : / { name = $NF; n = 0; next }
    index(name, "sm100_gemm") {
      n++
      if ($0 ~ /UCGABAR_WAIT/ && !(name in wait)) wait[name] = n
      if ($0 ~ /UTCATOMSWS[.]2CTA[.]FIND_AND_SET/ && !(name in alloc)) alloc[name] = n
      seen[name] = 1
    }
    END { for (k in seen) print k, (k in wait) ? wait[k] : 0, (k in alloc) ? alloc[k] : 0 }' "$sass")
  while read -r name wait_at alloc_at; do
    [[ -z ${name:-} ]] && continue
    pretty=$(demangle <<<"$name")
    [[ $pretty =~ $sm100_pair ]] || continue  # single-CTA kernels have no peer
    if [[ $wait_at -eq 0 || $alloc_at -eq 0 ]]; then
      echo "FAIL: no cluster barrier wait or no tcgen05.alloc in $pretty"
      status=1
    elif [[ $alloc_at -lt $wait_at ]]; then
      echo "FAIL: tcgen05.alloc before the first cluster barrier in $pretty"
      status=1
    else
      echo "ok:   tcgen05.alloc after the first cluster barrier in $pretty"
    fi
  done <<<"$order"
fi

# ---------------------------------------------------------------------------
# 4. Portable PTX of the generic kernels (`.target sm_PTX_ARCH`, then each
#    kernel's `.entry`).
# ---------------------------------------------------------------------------
if [[ -n $ptx_arch ]]; then
  if ! ptx=$("$cuobjdump" -ptx "$lib" 2>&1); then
    echo "FAIL: cuobjdump -ptx found no PTX in $lib (the generic kernels' portable PTX is missing):"
    head -5 <<<"$ptx"
    status=1
  else
    for kernel in scale_kernel reference_gemm_kernel; do
      for dtype in __half __nv_bfloat16; do
        found=$(awk -v want="sm_$ptx_arch" -v k="$kernel" -v t="$dtype" '
          /^\.target / { target = $2 }
          /\.entry / && target == want && index($0, k) && index($0, length(t) t) { n++ }
          END { print n + 0 }' <<<"$ptx")
        if [[ $found -eq 0 ]]; then
          echo "FAIL: no PTX of sm_$ptx_arch for $kernel<$dtype> in $lib"
          status=1
        else
          echo "ok:   PTX of sm_$ptx_arch for $kernel<$dtype>"
        fi
      done
    done
  fi
fi

if [[ $status -eq 0 ]]; then echo "PASS"; else echo "FAILED"; fi
exit $status
