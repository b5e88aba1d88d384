#!/usr/bin/env bash
# Builds a kind node image for the pinned Kubernetes release with no registry: kind's published
# image cannot be pulled on machines that reach only Debian's packages and the Go module proxy.
#
# The image is what kind's own node image is (images/base/Dockerfile in the sigs.k8s.io/kind
# module, whose files this script takes from the module cache), built from:
#   - a Debian root filesystem with systemd, containerd, runc and the CNI plugins (hack/cluster/kind-rootfs.sh);
#   - kubelet, kubectl and kubeadm from the project's pinned Kubernetes builds;
#   - the images kubeadm runs, preloaded in the node's containerd under the names kubeadm asks
#     for: the control plane and kube-proxy from the same builds, etcd and CoreDNS at the releases
#     kubeadm defaults to (hack/build/pinned.sh etcd and coredns), and the project's pause;
#   - a pod network of the project's own (e2e/images/nodenet, hack/cluster/kindnode/default-cni.yaml) in
#     place of kindnetd, whose module the proxy does not serve.
# Its tag carries a key of every input, so an image already in the engine is reused and a changed
# input builds a new one. Needs root, a running engine (hack/cluster/engine.sh start) and debootstrap.
#
# usage: hack/cluster/kind-node-image.sh
# prints the image reference on stdout (set MLKUBE_KIND_NODE_IMAGE to it for e2e/cluster/kind).
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=${MLKUBE_CACHE:-$HOME/.cache/mlkube}
log() { echo "kind-node-image: $*" >&2; }
die() { log "$*"; exit 1; }

docker info >/dev/null 2>&1 || die "no container engine answers; start one (hack/cluster/engine.sh start)"
version=$(hack/build/pinned.sh --version kube)
kind_files="$(go list -m -f '{{.Dir}}' sigs.k8s.io/kind)/images/base/files"
[ -d "$kind_files" ] || die "$kind_files is missing: run go mod download sigs.k8s.io/kind"

# The parts, each built once and cached by its own pins.
kube_bin=$(hack/build/pinned.sh kube)
kubeadm=$(hack/build/pinned.sh kubeadm)
etcd=$(hack/build/pinned.sh etcd)
coredns=$(hack/build/pinned.sh coredns)
rootfs=$(hack/cluster/kind-rootfs.sh)

# The images kubeadm of this release runs, each from its binary.
work=$(mktemp -d "${TMPDIR:-/tmp}/kind-node-image.XXXXXX")
trap 'pkill -F "$work/containerd.pid" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/images"
image() { # image REF BINARY [images flags...]
  local ref=$1 bin=$2
  shift 2
  go run ./e2e/cmd/images -out "$work/images" -binary "$bin" "$@" "$ref" >/dev/null
}
for ref in $("$kubeadm" config images list --kubernetes-version "$version"); do
  name=${ref%:*} tag=${ref##*:}
  case "${name##*/}" in
    kube-apiserver | kube-controller-manager | kube-scheduler) image "$ref" "$kube_bin/${name##*/}" ;;
    # kubeadm's DaemonSet runs /usr/local/bin/kube-proxy, which calls iptables and conntrack.
    kube-proxy) image "$ref" "$kube_bin/kube-proxy" -dir /usr/local/bin -base-script hack/cluster/kind-rootfs.sh ;;
    etcd)
      [ "v${tag%-*}" = "$(hack/build/pinned.sh --version etcd)" ] ||
        die "kubeadm runs $ref but hack/build/etcd pins etcd $(hack/build/pinned.sh --version etcd); pin kubeadm's release there"
      image "$ref" "$etcd"
      ;;
    coredns)
      [ "$tag" = "$(hack/build/pinned.sh --version coredns)" ] ||
        die "kubeadm runs $ref but hack/build/coredns pins CoreDNS $(hack/build/pinned.sh --version coredns); pin kubeadm's release there"
      image "$ref" "$coredns"
      ;;
    # The pod sandbox: containerd's sandbox_image below names it.
    pause)
      pause=$ref
      CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$work/pause" ./e2e/images/pause
      image "$ref" "$work/pause"
      ;;
    *) die "kubeadm asks for $ref, which this script does not know how to build" ;;
  esac
done
[ -n "${pause:-}" ] || die "kubeadm named no pause image"
nodenet=$(go run ./e2e/cmd/images -out "$work/images" mlkube/kind-nodenet:dev)

# The key: this script, the node files, kind's base files, the rootfs and every image.
key=$( {
  cat "$0" hack/cluster/kindnode/*
  (cd "$kind_files" && find . -type f | sort | xargs sha256sum)
  echo "$rootfs"
  sha256sum "$kube_bin/kubelet" "$kube_bin/kubectl" "$kubeadm" | cut -d' ' -f1
  (cd "$work/images" && sha256sum ./*.tar)
} | sha256sum | cut -c1-12)
ref="mlkube/kind-node:$version-$key"
if docker image inspect "$ref" >/dev/null 2>&1; then
  log "$ref is already built"
  echo "$ref"
  exit 0
fi
log "building $ref"

root="$work/root"
mkdir -p "$root"
tar -C "$root" -xf "$rootfs"

# kind's base files, with the modes its Dockerfile gives them (the module cache's are read-only).
cp -r "$kind_files/." "$root/"
chmod -R u+w,go-w "$root/kind" "$root/etc" "$root/usr/local/bin" "$root/LICENSES"
find "$root/kind" "$root/etc/systemd/system" "$root/etc/containerd" "$root/etc/default" "$root/etc/sysctl.d" "$root/LICENSES" -type f -exec chmod 0644 {} +
chmod 0755 "$root"/usr/local/bin/* "$root"/kind/bin/* "$root/kind" "$root/kind/bin"
# As kind's Dockerfile: no services but the ones enabled below, no kernel log, systemd as init.
rm -f "$root"/lib/systemd/system/sysinit.target.wants/systemd-tmpfiles-setup.service \
  "$root"/lib/systemd/system/multi-user.target.wants/* "$root"/etc/systemd/system/*.wants/* \
  "$root"/lib/systemd/system/local-fs.target.wants/* "$root"/lib/systemd/system/sockets.target.wants/*udev* \
  "$root"/lib/systemd/system/sockets.target.wants/*initctl* "$root"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"$root/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$root/sbin/init"
mkdir -p "$root/etc/kubernetes/manifests"

# Debian's containerd and CNI plugins where kind's units and containerd's defaults look for them.
for b in containerd ctr containerd-shim-runc-v2; do ln -sf "/usr/bin/$b" "$root/usr/local/bin/$b"; done
mkdir -p "$root/opt/cni"
ln -sfn /usr/lib/cni "$root/opt/cni/bin"
# The runtime spec kind's config names: containerd's default, with kind's product-files hook and
# without rlimits (as kind's Dockerfile makes it).
ctr oci spec | jq '.hooks.createContainer += [{"path": "/kind/bin/mount-product-files.sh"}] | del(.process.rlimits)' \
  >"$root/etc/containerd/cri-base.json"
sed -i "s|sandbox_image = .*|sandbox_image = \"$pause\"|" "$root/etc/containerd/config.toml"
grep -q "sandbox_image = \"$pause\"" "$root/etc/containerd/config.toml" || die "kind's containerd config has no sandbox_image to set"
install -m 0755 hack/cluster/kindnode/restrict-oom-score-adj.sh "$root/kind/bin/"
install -D -m 0644 hack/cluster/kindnode/containerd-mlkube.conf "$root/etc/systemd/system/containerd.service.d/10-mlkube.conf"
systemctl --root="$root" enable kubelet.service containerd.service undo-mount-hacks.service >/dev/null 2>&1
systemctl --root="$root" mask systemd-binfmt.service >/dev/null 2>&1

install -m 0755 "$kube_bin/kubelet" "$kube_bin/kubectl" "$kubeadm" "$root/usr/bin/"
echo "$version" >"$root/kind/version"
install -D -m 0644 hack/cluster/kindnode/default-cni.yaml "$root/kind/manifests/default-cni.yaml"
install -D -m 0644 hack/cluster/kindnode/default-storage.yaml "$root/kind/manifests/default-storage.yaml"

# Preload the images into the node's containerd store, with a containerd of this machine's on the
# node's directory (no container engine involved); CRI unpacks them on first use, as for kind's.
cat >"$work/containerd.toml" <<EOT
version = 2
root = "$root/var/lib/containerd"
state = "$work/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$work/containerd.sock"
EOT
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
echo $! >"$work/containerd.pid"
for _ in $(seq 100); do ctr -a "$work/containerd.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
nodectr() { ctr -a "$work/containerd.sock" -n k8s.io "$@"; }
for t in "$work"/images/*.tar; do
  nodectr images import --no-unpack "$t" >/dev/null ||
    die "importing $t into the node's containerd failed; its log: $(tail -5 "$work/containerd.log")"
done
# Pinned, as kind's preloaded images are: the kubelet's image garbage collection keeps them.
for i in $(nodectr images ls -q); do
  nodectr images label "$i" io.cri-containerd.pinned=pinned >/dev/null
  log "preloaded $i"
done
pkill -F "$work/containerd.pid"
while pgrep -F "$work/containerd.pid" >/dev/null; do sleep 0.1; done

# The node image: the tree, with the entrypoint, environment and stop signal of kind's (systemd
# halts on SIGRTMIN+3). docker import of docker.io 20.10 cannot set a stop signal, so a build from
# the imported tree adds it; neither step pulls anything.
(cd "$root" && tar --numeric-owner -c $(ls -A)) | docker import \
  --change 'ENV container=docker' \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' \
  - "$ref-tree" >/dev/null
printf 'FROM %s\nSTOPSIGNAL SIGRTMIN+3\n' "$ref-tree" | DOCKER_BUILDKIT=0 docker build -q -t "$ref" - >/dev/null 2>"$work/build.log" || die "docker build: $(cat "$work/build.log")"
docker rmi "$ref-tree" >/dev/null
log "built $ref"
echo "$ref"
