# Shared by the scripts that build tools from the module proxy (hack/build/kube-binaries.sh, kubeadm.sh,
# hack/build/coredns.sh). Each tool is pinned by a go.mod and go.sum committed under hack/build/, built with
# -mod=readonly so a newer release on the proxy cannot change what is built, and cached in a
# directory whose name carries the pinned version and a hash of both files: a change of pins
# rebuilds, and nothing stale is reused.
# shellcheck shell=bash

# pinned_version MODDIR MODULE: the exact version MODDIR/go.mod requires of MODULE.
pinned_version() {
  local v
  v=$(awk -v m="$2" '$1 == m && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1/go.mod")
  if [ -z "$v" ]; then
    echo "pinned: $1/go.mod does not require $2; restore it from git" >&2
    return 1
  fi
  echo "$v"
}

# pinned_cache_dir MODDIR NAME VERSION: $MLKUBE_CACHE/NAME-VERSION-<hash of go.mod and go.sum>.
pinned_cache_dir() {
  local sum
  for f in go.mod go.sum; do
    [ -f "$1/$f" ] || { echo "pinned: $1/$f is missing; restore it from git" >&2; return 1; }
  done
  sum=$(cat "$1/go.mod" "$1/go.sum" | sha256sum | cut -c1-12)
  echo "${MLKUBE_CACHE:-$HOME/.cache/mlkube}/$2-$3-$sum"
}

# pinned_build MODDIR OUTDIR LDFLAGS PACKAGE...: static binaries of PACKAGEs, built in the pinned
# module without touching its files, into OUTDIR through a temporary directory (no half-written
# binary is ever at its final name).
pinned_build() {
  local moddir=$1 out=$2 ldflags=$3 tmp p
  shift 3
  mkdir -p "$out"
  tmp=$(mktemp -d "$out/.build.XXXXXX")
  if ! CGO_ENABLED=0 go build -C "$moddir" -mod=readonly -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" "$@" >&2; then
    rm -rf "$tmp"
    return 1
  fi
  for p in "$@"; do mv "$tmp/${p##*/}" "$out/${p##*/}"; done
  rm -rf "$tmp"
}

# kube_version_ldflags VERSION: the -X flags that make a Kubernetes binary report VERSION (kubectl
# version, /version, kubeadm's choice of images), as a release build stamps them.
kube_version_ldflags() {
  local minor=${1#v1.} p out=""
  minor=${minor%%.*}
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    out+=" -X $p.gitVersion=$1 -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  echo "$out"
}
