#!/usr/bin/env bash
# Prints a KUBEBUILDER_ASSETS directory for controller-runtime's envtest: kube-apiserver built by
# `hack/build/pinned.sh kube` and Debian's etcd, since setup-envtest cannot download here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${MLKUBE_CACHE:-$HOME/.cache/mlkube}
etcd=$(command -v etcd || true)
if [ -z "$etcd" ]; then
  echo "envtest-assets: etcd not found; install Debian's etcd-server (apt-get install etcd-server)" >&2
  exit 1
fi
bin=$("$here/pinned.sh" kube kube-apiserver)
version=$(basename "$(dirname "$bin")")
dir="$CACHE/envtest-${version#kube-}"
mkdir -p "$dir"
ln -sfn "$bin/kube-apiserver" "$dir/kube-apiserver"
ln -sfn "$etcd" "$dir/etcd"
echo "$dir"
