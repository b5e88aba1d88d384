#!/usr/bin/env bash
# Builds Kubernetes server binaries from k8s.io/kubernetes through the Go module proxy, because this
# project's machines cannot download release tarballs or run setup-envtest. Results are cached by
# version under $MLKUBE_CACHE/kube-<version>/bin, so only the first run pays for the build.
#
# usage: hack/kube-binaries.sh [component...]   (default: every server component)
# prints the bin directory on stdout.
set -euo pipefail

# v1.37.0: the module proxy refuses the source zip of v1.37.2.
KUBE_VERSION=${KUBE_VERSION:-v1.37.0}
CACHE=${MLKUBE_CACHE:-$HOME/.cache/mlkube}
dir="$CACHE/kube-$KUBE_VERSION"
bin="$dir/bin"
components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)

missing=()
for c in "${components[@]}"; do [ -x "$bin/$c" ] || missing+=("$c"); done
if [ ${#missing[@]} -eq 0 ]; then echo "$bin"; exit 0; fi

mkdir -p "$dir/src" "$bin"
cd "$dir/src"
if [ ! -f go.sum ]; then
  # k8s.io/kubernetes replaces its staging modules with ./staging paths, which a dependent module
  # cannot see; pin each of them to the matching published v0.X.Y instead.
  staging_version="v0.${KUBE_VERSION#v1.}"
  info=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" || true)
  if grep -q '"Error"' <<<"$info"; then
    echo "kube-binaries: cannot download k8s.io/kubernetes@$KUBE_VERSION:" >&2
    grep '"Error"' <<<"$info" >&2
    exit 1
  fi
  kmod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$info")
  {
    echo "module mlkube.local/kubebuild"
    echo
    grep -E '^go ' "$kmod"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    grep -E '=> ./staging/src/' "$kmod" | awk -v v="$staging_version" '{print "replace " $1 " => " $1 " " v}'
  } > go.mod.tmp
  mv go.mod.tmp go.mod
  printf 'package kubebuild\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver/app"\n' > deps.go
  go mod tidy >&2
fi

pkgs=()
for c in "${missing[@]}"; do
  case "$c" in
    kubectl) pkgs+=(k8s.io/kubernetes/cmd/kubectl) ;;
    *) pkgs+=("k8s.io/kubernetes/cmd/$c") ;;
  esac
done
minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
ldflags=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
tmp=$(mktemp -d "$dir/build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building ${missing[*]} $KUBE_VERSION (first run only; cached in $bin)" >&2
go get "${pkgs[@]}" >&2
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$tmp/" "${pkgs[@]}" >&2
for c in "${missing[@]}"; do mv "$tmp/$c" "$bin/$c"; done
echo "$bin"
