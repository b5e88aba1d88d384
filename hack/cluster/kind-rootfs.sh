#!/usr/bin/env bash
# Builds the Debian root filesystem of the registry-free kind node image (hack/cluster/kind-node-image.sh)
# with debootstrap, from the Debian mirror and release this machine uses: systemd as init,
# containerd, runc and the CNI plugins, and the networking tools kubelet, kube-proxy and kind's
# entrypoint call. The same tree is the base layer of the kube-proxy image, which runs iptables
# and conntrack from it.
#
# The rootfs, an uncompressed tar, is cached under $MLKUBE_CACHE/kind-rootfs-<release>-<key>, the
# key hashing this script (the package list) and the mirror, so only the first run pays (about two
# minutes). Needs root and debootstrap (hack/cluster/engine.sh install).
#
# usage: hack/cluster/kind-rootfs.sh
# prints the path of the rootfs tarball on stdout.
set -euo pipefail
# What the node runs beyond minbase, as kind's base image has it (images/base/Dockerfile in the
# sigs.k8s.io/kind module), with Debian's containerd, runc and CNI plugins in place of kind's builds.
packages=(systemd systemd-sysv dbus conntrack iptables nftables iproute2 ethtool util-linux mount kmod
  libseccomp2 pigz e2fsprogs bash ca-certificates curl jq procps containerd runc containernetworking-plugins socat)

. /etc/os-release
release=${VERSION_CODENAME:?/etc/os-release names no VERSION_CODENAME}
# The first Debian mirror apt uses here: the only one these machines can reach.
mirror=$(grep -hoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
  head -1 | awk '{print $2}' || true)
mirror=${mirror:-http://deb.debian.org/debian}

key=$( { cat "$0"; echo "$mirror"; } | sha256sum | cut -c1-16)
dir="${MLKUBE_CACHE:-$HOME/.cache/mlkube}/kind-rootfs-$release-$key"
out="$dir/rootfs.tar"
if [ -f "$out" ]; then echo "$out"; exit 0; fi

command -v debootstrap >/dev/null || { echo "kind-rootfs: debootstrap is missing; run hack/cluster/engine.sh install" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "kind-rootfs: debootstrap needs root" >&2; exit 1; }
mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'umount -R "$tmp/root/proc" "$tmp/root/sys" 2>/dev/null || true; rm -rf "$tmp"' EXIT
echo "kind-rootfs: debootstrap $release from $mirror (first run only; cached in $dir)" >&2
list=$(IFS=,; echo "${packages[*]}")
if ! debootstrap --variant=minbase --include="$list" "$release" "$tmp/root" "$mirror" >"$tmp/debootstrap.log" 2>&1; then
  tail -30 "$tmp/debootstrap.log" >&2
  cat "$tmp/root/debootstrap/debootstrap.log" 2>/dev/null | tail -30 >&2
  exit 1
fi
# apt's downloads are not part of the image.
rm -rf "$tmp/root/var/cache/apt/archives/"*.deb "$tmp/root/var/lib/apt/lists/"*
# /dev, /proc and /sys are the container engine's; names without "./" so the tar is also a layer.
(cd "$tmp/root" && tar --numeric-owner --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -cf "$tmp/rootfs.tar" $(ls -A))
mv "$tmp/rootfs.tar" "$out"
echo "$out"
