#!/usr/bin/env bash
# The C ABI as a C program sees it: tcgemm.h compiles as C89, C99 and C11
# with -Wall -Wextra -pedantic -Werror, and a C program linked against the
# library gets the header's numbers back: TCGEMM_INVALID_ARGUMENT and a reason
# naming the dtype for an unknown one, TCGEMM_OK for an empty product with
# null pointers (neither needs a GPU: arguments are checked before the device).
# usage: check_c_header.sh INCLUDE_DIR LIBRARY   (exit 77, skipped: no C compiler)
set -euo pipefail
include=$1 library=$2
cc=${CC:-$(command -v cc || command -v gcc || true)}
[[ -n $cc ]] || { echo "check_c_header: no C compiler (cc, gcc, or \$CC): skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/use.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include "tcgemm/tcgemm.h"

int main(void) {
  enum tcgemm_status status;
  /* An unknown dtype: refused, named. */
  status = (enum tcgemm_status)tcgemm_gemm(7, TCGEMM_OP_N, TCGEMM_OP_T, 8, 8, 8, 1.0f, NULL, 8, NULL, 8, 0.0f, NULL,
                                           8, NULL);
  if (status != TCGEMM_INVALID_ARGUMENT || strstr(tcgemm_last_error(), "dtype") == NULL) {
    printf("an unknown dtype gave %d: %s\n", (int)status, tcgemm_last_error());
    return 1;
  }
  /* M == 0: nothing to do, success, whatever the pointers. */
  status = (enum tcgemm_status)tcgemm_gemm_epilogue(TCGEMM_BF16, TCGEMM_OP_N, TCGEMM_OP_N, 0, 8, 8, 1.0f, NULL, 8,
                                                    NULL, 8, 0.0f, NULL, 8, NULL, TCGEMM_BIAS_F32,
                                                    TCGEMM_ACT_SILU, NULL);
  if (status != TCGEMM_OK) {
    printf("an empty product gave %d: %s\n", (int)status, tcgemm_last_error());
    return 1;
  }
  return 0;
}
EOF
for std in c89 c99 c11; do
  "$cc" -std=$std -Wall -Wextra -pedantic -Werror -I"$include" -c "$work/use.c" -o "$work/use_$std.o" ||
    { echo "check_c_header: tcgemm.h does not compile as $std"; exit 1; }
done
libdir=$(cd "$(dirname "$library")" && pwd)
"$cc" "$work/use_c99.o" "$library" -Wl,-rpath,"$libdir" -o "$work/use" ||
  { echo "check_c_header: a C program does not link against $library"; exit 1; }
"$work/use" || { echo "check_c_header: the C program failed"; exit 1; }
echo "check_c_header: ok (C89, C99, C11; linked and ran)"
