#!/usr/bin/env bash
# `make krew-check`'s second half: proves `go install github.com/mlkube/mlkube/cmd/kubectl-etl@VERSION`
# (and kubectl-mxjob), the install docs/plugins.md gives a user with Go and no checkout, works from a
# clean GOPATH and installs plugins that report VERSION. VERSION need not be tagged yet: the tree
# under test (hack/release/krew/tree.sh) is offered as github.com/mlkube/mlkube@VERSION by a module
# proxy directory (hack/release/krew/modproxy, the zip made by the go command's own zip code), first
# on GOPROXY. The install fails as a user's would when go.mod has a replace or exclude directive
# (which `go install pkg@version` refuses), when a file the plugins need is left out of the module
# zip, or when go.sum lacks a dependency.
#
# The GOPATH and module cache are new and empty, so every dependency is downloaded and checked
# against the module's go.sum as on a user's machine; it is downloaded from this machine's module
# cache (its download directory is a module proxy, file://), then from $(go env GOPROXY), so the
# check needs no network once the project builds. The build cache is this machine's, with
# -trimpath and CGO_ENABLED=0, the settings of the krew archives (archives.sh), so that packages
# archives.sh compiled already from the same sources are not compiled again: the build cache keys
# results by content, not by where the sources came from. A user's cgo-enabled build differs only
# in how the standard library resolves names and users; the plugins use no cgo.
#
# usage: hack/release/krew/go-install-check.sh VERSION
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 VERSION" >&2; exit 2; }
version=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
module=github.com/mlkube/mlkube
fail() { echo "go-install-check: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT # the module cache is read-only
"$here/tree.sh" "$work/src"
(cd "$root" && go run ./hack/release/krew/modproxy -src "$work/src" -version "$version" -out "$work/proxy")

gopath="$work/gopath"
pkgs=("$module/cmd/kubectl-etl@$version" "$module/cmd/kubectl-mxjob@$version")
# Outside any module and workspace, as a user runs it.
if ! out=$(cd "$work" && env GOPATH="$gopath" GOMODCACHE="$gopath/pkg/mod" GOBIN= GOWORK=off GOFLAGS=-trimpath \
  GOPROXY="file://$work/proxy,file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)" \
  GONOSUMDB="$module" GONOPROXY= GOPRIVATE= CGO_ENABLED=0 go install "${pkgs[@]}" 2>&1); then
  fail "go install ${pkgs[*]} from a clean GOPATH failed:
$out"
fi
for p in kubectl-etl kubectl-mxjob; do
  bin="$gopath/bin/$p"
  [ -x "$bin" ] || fail "go install wrote no $bin"
  out=$("$bin" version --client 2>&1) || fail "$bin version --client failed: $out"
  grep -q -- "$version" <<<"$out" || fail "$bin version --client does not report $version: $out"
done
echo "go-install-check: go install ${pkgs[*]} from a clean GOPATH; both report $version"
