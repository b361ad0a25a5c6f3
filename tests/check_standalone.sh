#!/usr/bin/env bash
# The project stands alone: no tracked file may point at a document or
# folder outside the repository. The design lives in docs/ (see the patterns
# below); a design or style note named without its docs/ folder, a path that
# climbs above the checkout, or the design's origin named privately instead of
# by its public name is a reference a reader of this repository cannot follow.
# Usage: check_standalone.sh REPO_ROOT   (exit 0: clean, 1: found, 77: no git)
set -uo pipefail
root=${1:?usage: check_standalone.sh REPO_ROOT}
cd "$root" || exit 1
command -v git >/dev/null && git rev-parse --git-dir >/dev/null 2>&1 || { echo "SKIP: not a git checkout"; exit 77; }
patterns=(
  '(^|[^/A-Za-z_])DESIGN\.md'       # the design document is docs/DESIGN.md
  'STYLE\.md'
  '\.\./shared'
  '\b[Tt]he s[e]ed\b'             # the design's origin has a public name (docs/DESIGN.md)
)
status=0
for p in "${patterns[@]}"; do
  if hits=$(git grep -n -I -E "$p" -- . ':!tests/check_standalone.sh'); then
    echo "references outside the repository ($p):"
    echo "$hits"
    status=1
  fi
done
[[ $status -eq 0 ]] && echo "standalone: no references outside the repository"
exit $status
