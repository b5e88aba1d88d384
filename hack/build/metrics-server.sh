#!/usr/bin/env bash
# Builds metrics-server from sigs.k8s.io/metrics-server through the Go module proxy, because this
# project's machines cannot pull its image; the e2e clusters run it so that metrics.k8s.io answers
# (`kubectl mxjob top`, `kubectl etl metrics`). The build is pinned by hack/build/metrics-server/go.mod
# and go.sum and cached under $MLKUBE_CACHE/metrics-server-<version>-<hash of the pins>/bin, so only
# the first run pays for it.
#
# usage: hack/build/metrics-server.sh
# prints the path of the metrics-server binary on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/metrics-server"
version=$(pinned_version "$mod" sigs.k8s.io/metrics-server)
bin="$(pinned_cache_dir "$mod" metrics-server "$version")/bin"
if [ ! -x "$bin/metrics-server" ]; then
  echo "building metrics-server $version (first run only; cached in $bin)" >&2
  # The version metrics-server reports (/version, its start-up log): what its release build stamps.
  pinned_build "$mod" "$bin" "-X k8s.io/client-go/pkg/version.gitVersion=$version" \
    sigs.k8s.io/metrics-server/cmd/metrics-server
fi
echo "$bin/metrics-server"
