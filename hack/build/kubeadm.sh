#!/usr/bin/env bash
# Builds kubeadm from k8s.io/kubernetes through the Go module proxy, for the registry-free kind node
# image (kind runs kubeadm inside each node). Pinned by hack/build/kubeadm/go.mod and go.sum, which
# must name the Kubernetes release hack/build/kube pins: kubeadm picks the control plane's image
# tags from its own version. Cached under $MLKUBE_CACHE/kubeadm-<version>-<hash of the pins>/bin.
#
# usage: hack/build/kubeadm.sh
# prints the path of the kubeadm binary on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/kubeadm"
version=$(pinned_version "$mod" k8s.io/kubernetes)
servers=$(pinned_version "$here/kube" k8s.io/kubernetes)
if [ "$version" != "$servers" ]; then
  echo "kubeadm.sh: hack/build/kubeadm pins k8s.io/kubernetes $version but hack/build/kube pins $servers; copy hack/build/kube/go.mod's require block into hack/build/kubeadm/go.mod and run go mod tidy there" >&2
  exit 1
fi
bin="$(pinned_cache_dir "$mod" kubeadm "$version")/bin"
if [ ! -x "$bin/kubeadm" ]; then
  echo "building kubeadm $version (first run only; cached in $bin)" >&2
  pinned_build "$mod" "$bin" "$(kube_version_ldflags "$version")" k8s.io/kubernetes/cmd/kubeadm
fi
echo "$bin/kubeadm"
