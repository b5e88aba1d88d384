#!/usr/bin/env bash
# Builds Kubernetes server binaries from k8s.io/kubernetes through the Go module proxy, because this
# project's machines cannot download release tarballs or run setup-envtest. The build is pinned by
# hack/build/kube/go.mod and go.sum (k8s.io/kubernetes and every staging module at exact versions)
# and cached under $MLKUBE_CACHE/kube-<version>-<hash of the pins>/bin, so only the first run pays.
#
# usage: hack/build/kube-binaries.sh [component...]   (default: every server component)
# prints the bin directory on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/kube"
version=$(pinned_version "$mod" k8s.io/kubernetes)
bin="$(pinned_cache_dir "$mod" kube "$version")/bin"
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

missing=()
for c in "${components[@]}"; do [ -x "$bin/$c" ] || missing+=("$c"); done
if [ ${#missing[@]} -eq 0 ]; then echo "$bin"; exit 0; fi

pkgs=()
for c in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
echo "building ${missing[*]} $version (first run only; cached in $bin)" >&2
pinned_build "$mod" "$bin" "$(kube_version_ldflags "$version")" "${pkgs[@]}"
echo "$bin"
