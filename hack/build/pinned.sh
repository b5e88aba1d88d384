#!/usr/bin/env bash
# Builds a third-party tool from the Go module proxy, because this project's machines can download
# neither release tarballs nor images: only Debian's packages and Go modules. Each tool NAME is
# pinned by hack/build/NAME/go.mod and go.sum (exact versions of it and of everything it links),
# built with -mod=readonly so that a newer release on the proxy never changes what is built, and
# cached under $MLKUBE_CACHE/NAME-<version>-<hash of go.mod and go.sum>/bin: only the first run
# pays, and a change of pins builds anew.
#
# usage: hack/build/pinned.sh NAME [BINARY...]
#   builds NAME's binaries (BINARYs alone, when given) unless cached, then prints the binary's path,
#   or the bin directory for the tools of several binaries (kube, krew).
# usage: hack/build/pinned.sh --version NAME
#   prints the release hack/build/NAME pins.
set -euo pipefail
build=$(cd "$(dirname "$0")" && pwd)

# The tools: NAME, the module whose pinned version names the build, and the packages to build, each
# binary named after its package's last element.
tool() {
  case $1 in
    # The server binaries for envtest, the local cluster and the kind node image, and kubectl.
    kube) module=k8s.io/kubernetes packages=(k8s.io/kubernetes/cmd/{kube-apiserver,kube-controller-manager,kube-scheduler,kubelet,kube-proxy,kubectl}) ;;
    # For the kind node image: kind runs kubeadm inside each node. Its own module so that adding it
    # left kube's pins and cache as they were.
    kubeadm) module=k8s.io/kubernetes packages=(k8s.io/kubernetes/cmd/kubeadm) ;;
    # For the kind node image: kubeadm runs it as a static pod (hack/build/etcd/etcd is its main).
    etcd) module=go.etcd.io/etcd/server/v3 packages=(./etcd) ;;
    # Cluster DNS of both e2e clusters, with the plugins their Corefiles use (hack/build/coredns/coredns is its main).
    coredns) module=github.com/coredns/coredns packages=(./coredns) ;;
    # metrics.k8s.io on the e2e clusters (kubectl mxjob top, kubectl etl metrics).
    metrics-server) module=sigs.k8s.io/metrics-server packages=(sigs.k8s.io/metrics-server/cmd/metrics-server) ;;
    # make chart-check's helm lint and helm template.
    helm) module=helm.sh/helm/v3 packages=(helm.sh/helm/v3/cmd/helm) ;;
    # make krew-check: krew's installer and its manifest validator (what krew-index's CI runs).
    krew) module=sigs.k8s.io/krew packages=(sigs.k8s.io/krew/cmd/{krew,validate-krew-manifest}) ;;
    # The S3 server of the e2e clusters and of the S3 client's tests: a real S3 API over a directory.
    versitygw) module=github.com/versity/versitygw packages=(github.com/versity/versitygw/cmd/versitygw) ;;
    # Kueue on the e2e clusters, which queues and admits MxJobs.
    kueue) module=sigs.k8s.io/kueue packages=(sigs.k8s.io/kueue/cmd/kueue) ;;
    *)
      echo "pinned: no tool named '$1'; one of kube kubeadm etcd coredns metrics-server helm krew versitygw kueue" >&2
      exit 2
      ;;
  esac
}

# ldflags NAME VERSION: what the tool's own release build stamps, so that it reports VERSION
# (kubectl version, /version, kubeadm's choice of images, helm version).
ldflags() {
  local minor p
  case $1 in
    kube | kubeadm)
      minor=${2#v1.}
      minor=${minor%%.*}
      for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        echo -n " -X $p.gitVersion=$2 -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
      done
      ;;
    metrics-server) echo -n "-X k8s.io/client-go/pkg/version.gitVersion=$2" ;;
    helm) echo -n "-X helm.sh/helm/v3/internal/version.version=$2 -X helm.sh/helm/v3/internal/version.gitTreeState=clean" ;;
    krew) echo -n "-X sigs.k8s.io/krew/internal/version.gitTag=$2" ;;
    versitygw) echo -n "-X main.Version=$2" ;;
    kueue) echo -n "-X sigs.k8s.io/kueue/pkg/version.GitVersion=$2" ;;
  esac
}

# pinned_version NAME: the exact version hack/build/NAME/go.mod requires of the tool's module.
pinned_version() {
  local module packages v
  tool "$1"
  v=$(awk -v m="$module" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$build/$1/go.mod")
  if [ -z "$v" ]; then
    echo "pinned: hack/build/$1/go.mod does not require $module; restore it from git" >&2
    return 1
  fi
  echo "$v"
}

if [ "${1:-}" = --version ]; then
  [ $# -eq 2 ] || { echo "usage: $0 --version NAME" >&2; exit 2; }
  pinned_version "$2"
  exit 0
fi
[ $# -ge 1 ] || { echo "usage: $0 NAME [BINARY...] | --version NAME" >&2; exit 2; }
name=$1
shift
tool "$name"
mod=$build/$name
version=$(pinned_version "$name")
# kubeadm picks the control plane's image tags from its own version: it must be kube's release.
if [ "$name" = kubeadm ] && [ "$version" != "$(pinned_version kube)" ]; then
  echo "pinned: hack/build/kubeadm pins k8s.io/kubernetes $version but hack/build/kube pins $(pinned_version kube); copy hack/build/kube/go.mod's require block into hack/build/kubeadm/go.mod and run go mod tidy there" >&2
  exit 1
fi

for f in go.mod go.sum; do
  [ -f "$mod/$f" ] || { echo "pinned: hack/build/$name/$f is missing; restore it from git" >&2; exit 1; }
done
bin="${MLKUBE_CACHE:-$HOME/.cache/mlkube}/$name-$version-$(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-12)/bin"

wanted=("${packages[@]}")
if [ $# -gt 0 ]; then
  wanted=()
  for b in "$@"; do
    p=$(printf '%s\n' "${packages[@]}" | grep -m1 "/$b\$") || { echo "pinned: $name builds no binary named $b" >&2; exit 2; }
    wanted+=("$p")
  done
fi
missing() {
  missing=()
  for p in "${wanted[@]}"; do [ -x "$bin/${p##*/}" ] || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ]
}

# One build of a tool at a time: a caller that finds another building it (.ci/run builds the tools
# of later stages in the background) waits for that build, then builds only what is still missing,
# which is nothing unless that build failed.
if missing; then
  mkdir -p "$bin"
  exec 9>"${bin%/bin}/build.lock"
  flock 9
fi
if missing; then
  echo "building ${missing[*]##*/} $version (first run only; cached in $bin)" >&2
  # Static binaries built in the pinned module without touching its files, into bin through a
  # temporary directory: no half-written binary is ever at its final name.
  tmp=$(mktemp -d "$bin/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  CGO_ENABLED=0 go build -C "$mod" -mod=readonly -trimpath -ldflags "-s -w $(ldflags "$name" "$version")" -o "$tmp/" "${missing[@]}" >&2
  for p in "${missing[@]}"; do mv "$tmp/${p##*/}" "$bin/${p##*/}"; done
fi

if [ ${#packages[@]} -eq 1 ]; then echo "$bin/${packages[0]##*/}"; else echo "$bin"; fi
