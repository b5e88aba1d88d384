#!/usr/bin/env bash
# Builds etcd from go.etcd.io/etcd/server/v3 through the Go module proxy, for the registry-free kind
# node image (kubeadm runs it as a static pod; this machine cannot pull registry.k8s.io/etcd). The
# build is pinned by hack/build/etcd/go.mod and go.sum and cached under
# $MLKUBE_CACHE/etcd-<version>-<hash of the pins>/bin, so only the first run pays for it.
#
# usage: hack/build/etcd.sh
# prints the path of the etcd binary on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/etcd"
version=$(pinned_version "$mod" go.etcd.io/etcd/server/v3)
bin="$(pinned_cache_dir "$mod" etcd "$version")/bin"
if [ ! -x "$bin/etcd" ]; then
  echo "building etcd $version (first run only; cached in $bin)" >&2
  pinned_build "$mod" "$bin" "" ./etcd
fi
echo "$bin/etcd"
