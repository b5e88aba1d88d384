#!/usr/bin/env bash
# Builds krew and its manifest validator (validate-krew-manifest, what krew-index's CI runs) from
# sigs.k8s.io/krew, pinned by hack/build/krew/go.mod and go.sum, with -mod=readonly, and caches them
# under $MLKUBE_CACHE/krew-<version>-<hash of the pins>/bin so only the first run pays.
#
# usage: hack/build/krew/tools.sh        prints the bin directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../../lib/pinned.sh"

version=$(pinned_version "$here" sigs.k8s.io/krew)
bin="$(pinned_cache_dir "$here" krew "$version")/bin"
tools=(krew validate-krew-manifest)

missing=()
for t in "${tools[@]}"; do [ -x "$bin/$t" ] || missing+=("sigs.k8s.io/krew/cmd/$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "building krew $version (first run only; cached in $bin)" >&2
  pinned_build "$here" "$bin" "-X sigs.k8s.io/krew/internal/version.gitTag=$version" "${missing[@]}"
fi
echo "$bin"
