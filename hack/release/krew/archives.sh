#!/usr/bin/env bash
# Builds the krew archives of kubectl-etl and kubectl-mxjob for every platform plugins/*.yaml offers:
# OUTDIR/kubectl-<plugin>_<os>_<arch>.tar.gz holding the binary (kubectl-<plugin>.exe on windows,
# the name the manifests' bin gives there) and the repository's LICENSE, and OUTDIR/SHA256SUMS. A
# tar.gz on windows too: krew unpacks it on every platform, and one format keeps one reproducible
# recipe. The archives are byte-for-byte reproducible, so the sha256s written into plugins/*.yaml by
# `make krew` stay valid until the plugins' sources change:
#   - the binaries: CGO_ENABLED=0, -trimpath, -buildvcs=false (no commit or dirty flag stamped),
#     fixed ldflags, default GOAMD64/GOARM64, and the Go release hack/build/krew/go.mod's toolchain line
#     names (GOTOOLCHAIN; a machine with another Go fetches that one from the module proxy);
#   - the tarball: fixed member order, mode, owner, group and mtime; gzip -n stores no name or time.
#
# KREW_PLATFORMS, when set, builds only those of the platforms (make krew-check; see check.sh),
# and SHA256SUMS lists only their archives.
#
# usage: [KREW_PLATFORMS="os/arch ..."] hack/release/krew/archives.sh OUTDIR VERSION
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR VERSION" >&2; exit 2; }
out=$1 version=$2
root=$(cd "$(dirname "$0")/../../.." && pwd)
plugins=(etl mxjob)
# shellcheck source=platforms.sh
. "$(dirname "$0")/platforms.sh"
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
  { echo "krew: version $version is not semver with a leading v (e.g. v0.1.0)" >&2; exit 1; }
[ -f "$root/LICENSE" ] || { echo "krew: $root/LICENSE is missing; the archives must carry it" >&2; exit 1; }
toolchain=$(awk '$1 == "toolchain" {print $2}' "$root/hack/build/krew/go.mod")
[ -n "$toolchain" ] || { echo "krew: hack/build/krew/go.mod has no toolchain line; restore it from git" >&2; exit 1; }

mkdir -p "$out"
stage=$(mktemp -d "$out/.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# One platform: both binaries in one go build (shared compilation), then one archive per plugin.
build_platform() {
  local os=${1%/*} arch=${1#*/} dir p name exe=""
  [ "$os" = windows ] && exe=.exe
  dir="$stage/$os-$arch"
  mkdir -p "$dir"
  (cd "$root" && env GOTOOLCHAIN="$toolchain" GOFLAGS= GOOS="$os" GOARCH="$arch" GOAMD64=v1 GOARM64=v8.0 \
    CGO_ENABLED=0 go build -mod=readonly -trimpath -buildvcs=false \
    -ldflags "-s -w -X github.com/mlkube/mlkube/internal/version.Version=$version" \
    -o "$dir/" "${plugins[@]/#/./cmd/kubectl-}")
  install -m 0644 "$root/LICENSE" "$dir/LICENSE"
  for p in "${plugins[@]}"; do
    name="kubectl-${p}_${os}_${arch}.tar.gz"
    chmod 0755 "$dir/kubectl-$p$exe"
    tar -C "$dir" --format=gnu --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - LICENSE "kubectl-$p$exe" |
      gzip -n -6 >"$stage/$name"
  done
}

echo "krew: building ${plugins[*]} $version for ${platforms[*]} with $toolchain" >&2
pids=()
for pl in "${platforms[@]}"; do build_platform "$pl" & pids+=($!); done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
[ "$status" -eq 0 ] || { echo "krew: building the plugin archives failed" >&2; exit 1; }

# The sums of these archives only: OUTDIR may hold other platforms' from an earlier run.
(cd "$stage" && sha256sum -- kubectl-*_*_*.tar.gz >SHA256SUMS)
for f in "$stage"/*.tar.gz "$stage/SHA256SUMS"; do mv "$f" "$out/"; done
cat "$out/SHA256SUMS" >&2
