#!/usr/bin/env bash
# Installs what the docker-less local e2e cluster (e2e/cluster/local) needs on a fresh Debian
# machine: etcd, containerd, runc, CNI plugins and the networking tools from Debian, then builds
# (or finds cached) the Kubernetes binaries and CoreDNS from the Go module proxy. Idempotent: a
# second run installs and builds nothing. Needs root, as the cluster itself does.
set -euo pipefail
cd "$(dirname "$0")/../.."

# etcd-server: etcd; containerd: containerd and ctr; containernetworking-plugins: /usr/lib/cni;
# iptables and conntrack: kube-proxy; socat: port-forward; iproute2 and util-linux: ip, nsenter.
packages=(etcd-server containerd runc containernetworking-plugins iptables conntrack socat iproute2 util-linux)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "cluster-deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

hack/build/pinned.sh kube >/dev/null
hack/build/pinned.sh coredns >/dev/null
echo "cluster-deps: ready" >&2
