#!/usr/bin/env bash
# Copies this repository's working tree as it would be committed (tracked files as they are now, and
# untracked ones git does not ignore) into DEST, which must not exist: what `make krew-check` turns
# into a krew index and go-install-check.sh into a module, so that both test the tree under test,
# uncommitted changes included, and never the checkout's ignored build outputs.
#
# usage: hack/release/krew/tree.sh DEST
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DEST" >&2; exit 2; }
dest=$1
root=$(cd "$(dirname "$0")/../../.." && pwd)
[ ! -e "$dest" ] || { echo "tree: $dest exists; give a new directory" >&2; exit 1; }
mkdir -p "$dest"
# A tracked file deleted in the working tree is left out, as a commit of the tree would.
(cd "$root" && git ls-files -z --cached --others --exclude-standard --deduplicate |
  while IFS= read -r -d '' f; do [ -e "$f" ] || [ -L "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -C "$dest" -xf -
