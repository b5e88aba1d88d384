#!/usr/bin/env bash
# Builds Helm from helm.sh/helm/v3 through the Go module proxy, because this project's machines
# cannot download release tarballs. The build is pinned by hack/build/helm/go.mod and go.sum and
# cached under $MLKUBE_CACHE/helm-<version>-<hash of the pins>/bin, so only the first run pays for
# it (a few minutes on 2 cores).
#
# usage: hack/build/helm.sh
# prints the path of the helm binary on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/helm"
version=$(pinned_version "$mod" helm.sh/helm/v3)
bin="$(pinned_cache_dir "$mod" helm "$version")/bin"
if [ ! -x "$bin/helm" ]; then
  echo "building helm $version (first run only; cached in $bin)" >&2
  # What `helm version` reports, as Helm's own release build stamps it.
  pinned_build "$mod" "$bin" "-X helm.sh/helm/v3/internal/version.version=$version -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    helm.sh/helm/v3/cmd/helm
fi
echo "$bin/helm"
