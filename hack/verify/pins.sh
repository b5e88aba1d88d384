#!/usr/bin/env bash
# Fails when a pinned module's go.mod or go.sum is missing, not tracked by git, or not tidy, so
# that what is built from the module proxy is exactly what the repository says.
#
# usage: hack/verify/pins.sh MODDIR...
set -euo pipefail
cd "$(dirname "$0")/../.."
status=0
for mod in "$@"; do
  for f in go.mod go.sum; do
    if ! git ls-files --error-unmatch "$mod/$f" >/dev/null 2>&1; then
      echo "verify-pins: $mod/$f is missing or not committed; run 'cd $mod && go mod tidy' and commit it" >&2
      status=1
    fi
  done
  [ -f "$mod/go.mod" ] && [ -f "$mod/go.sum" ] || continue
  if ! diff=$(go -C "$mod" mod tidy -diff 2>&1); then
    echo "verify-pins: $mod/go.mod or go.sum is not tidy; run 'cd $mod && go mod tidy' and commit:" >&2
    echo "$diff" | head -40 >&2
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "pinned module files are present and tidy: $*"
exit "$status"
