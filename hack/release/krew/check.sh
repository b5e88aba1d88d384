#!/usr/bin/env bash
# `make krew-check`: proves plugins/*.yaml install as krew installs them, from this repository as a
# custom krew index.
#  1. builds the archives (hack/release/krew/archives.sh) into ARCHIVE_DIR;
#  2. runs krew's own validator, validate-krew-manifest (what krew-index's CI runs), on each
#     manifest: apiVersion and kind, name = file name, semver version with a leading v, a one-line
#     shortDescription, uri, lowercase 64-hex sha256 and bin set, selectors on os and arch only,
#     each matching a platform krew supports and no two selecting the same one;
#  3. fails when the manifest's version, uris or sha256s are not those of the archives just built
#     (the archives are reproducible, so a difference means `make krew` was not rerun and committed);
#  4. installs every platform of each manifest with the real krew (`krew install --manifest
#     --archive`, KREW_OS/KREW_ARCH selecting the platform) into a temporary KREW_ROOT, which
#     verifies the archive's sha256, extracts it and links bin (kubectl-<plugin>.exe on windows);
#     then finds LICENSE installed;
#  5. serves the archives over HTTP on loopback, commits the working tree (hack/release/krew/tree.sh)
#     into a temporary git repository with its plugins/*.yaml pointing at that server (KREW_URL, as
#     a release's ARCHIVES_URL points them at its own), and on a fresh KREW_ROOT runs what a user
#     runs: `kubectl krew index add mlkube <repository>`, `kubectl krew install mlkube/etl
#     mlkube/mxjob`; the installed binaries must report VERSION;
#  6. on this machine's platform, runs `kubectl etl --help`, `kubectl mxjob --help` and `version
#     --client` through kubectl's plugin discovery, with only that KREW_ROOT's bin and the system
#     directories on PATH.
# Every failure names the manifest, the platform where there is one, and the rule.
#
# KREW_PLATFORMS, when set, builds, compares and installs only those platforms (make krew-check's
# default, KREW_CHECK_PLATFORMS: a cross-compile of the plugins per platform was a third of a cold
# CI run's checks). The others' sha256s are then taken as the manifests have them, which is sound
# only while every file of this repository compiled into the plugins on a platform left out is
# compiled on one built too: then no change can reach a left-out archive without changing a built
# one, whose sha256 is compared (the module versions and the toolchain are stamped into every
# binary). The check fails, naming the file, when that does not hold.
#
# usage: [KREW_PLATFORMS="os/arch ..."] hack/release/krew/check.sh VERSION ARCHIVE_DIR MANIFEST...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 VERSION ARCHIVE_DIR MANIFEST..." >&2; exit 2; }
version=$1 archives=$2
shift 2
manifests=("$@")
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=platforms.sh
. "$here/platforms.sh"

work=$(mktemp -d)
server=""
trap '[ -z "$server" ] || kill "$server"; rm -rf "$work"' EXIT
fail() { echo "krew-check: $*" >&2; exit 1; }

# 1a. With some platforms left out: every file that reaches the plugins on one of them reaches them
# on a platform built here. First, so that a change that fails it costs no cross-compile.
plugin_files() { # plugin_files OS/ARCH: this repository's files compiled into the plugins there
  (cd "$here/../../.." && GOOS=${1%/*} GOARCH=${1#*/} CGO_ENABLED=0 go list -deps -f \
    '{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .SFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}' ./cmd/kubectl-etl ./cmd/kubectl-mxjob)
}
host="$(go env GOOS)/$(go env GOARCH)"
[[ " ${platforms[*]} " == *" $host "* ]] || fail "this machine ($host) is none of the platforms built here: ${platforms[*]} (KREW_PLATFORMS)"
left=()
for pl in "${all[@]}"; do [[ " ${platforms[*]} " == *" $pl "* ]] || left+=("$pl"); done
if [ ${#left[@]} -gt 0 ]; then
  for pl in "${platforms[@]}"; do plugin_files "$pl"; done | sort -u >"$work/built-files"
  for pl in "${left[@]}"; do
    only=$(plugin_files "$pl" | sort -u | comm -23 - "$work/built-files")
    [ -z "$only" ] || fail "on $pl the plugins compile files no platform built here compiles, so its archives' sha256s cannot be checked without building them: add $pl to KREW_PLATFORMS (empty: all six):
$only"
  done
  echo "krew-check: building ${platforms[*]}; what reaches the plugins on ${left[*]} reaches them on one of those, so the manifests' sha256s for those stand while the built ones match"
fi

# 1b. The archives.
tools=$("$here/../../build/pinned.sh" krew)
kubectl="$("$here/../../build/pinned.sh" kube kubectl)/kubectl"
"$here/archives.sh" "$archives" "$version"

# 2. krew's validator. It logs through klog and ends with a fatal line (and goroutine dump): show
# that line's message.
for m in "${manifests[@]}"; do
  if ! out=$("$tools/validate-krew-manifest" -manifest "$m" -skip-install 2>&1); then
    msg=$(printf '%s\n' "$out" | sed -n 's/^F[0-9]\{4\} [^]]*] //p' | head -1)
    fail "$m: krew's validator refuses it: ${msg:-$out}"
  fi
done
echo "krew-check: krew's validator accepts ${manifests[*]}"

# 3. The checked-in manifests are those of the archives just built. The sums compared: the archives
# built, and for the platforms left out the manifests' own.
sums="$work/sums"
mkdir -p "$sums"
cp "$archives/SHA256SUMS" "$sums/"
for m in "${manifests[@]}"; do
  awk '/^[ -]+uri: /{n = split($0, p, "/"); a = p[n]} /^[ -]+sha256: /{print $2 "  " a}' "$m"
done | while read -r sum archive; do
  awk -v a="$archive" '$2 == a {found = 1} END {exit !found}' "$sums/SHA256SUMS" || echo "$sum  $archive" >>"$sums/SHA256SUMS"
done
for m in "${manifests[@]}"; do
  fresh="$work/fresh/$(basename "$m")"
  mkdir -p "$work/fresh" && cp "$m" "$fresh"
  "$here/manifests.sh" "$version" "$sums" "$fresh"
  if ! d=$(diff -u --label "$m" --label "$m (make krew)" "$m" "$fresh"); then
    fail "$m: version, uri or sha256 is not that of the archives make krew builds now (the plugins changed since plugins/ was written); run 'make krew' and commit plugins/:
$d"
  fi
done
echo "krew-check: ${manifests[*]} carry version $version and the sha256s of $archives"

# 4. Install every platform with the real krew.
for pl in "${platforms[@]}"; do
  os=${pl%/*} arch=${pl#*/} exe=""
  [ "$os" = windows ] && exe=.exe
  root="$work/krew-$os-$arch"
  for m in "${manifests[@]}"; do
    name=$(basename "$m" .yaml)
    archive="$archives/kubectl-${name}_${os}_${arch}.tar.gz"
    if ! out=$(KREW_ROOT=$root KREW_OS=$os KREW_ARCH=$arch "$tools/krew" install --manifest="$m" --archive="$archive" </dev/null 2>&1); then
      fail "$m: $pl: krew install --manifest=$m --archive=$archive failed (sha256, archive or bin):
$out"
    fi
    [ -f "$root/store/$name/$version/LICENSE" ] ||
      fail "$m: $pl: no LICENSE installed from $archive (krew-index requires a license file in the archive)"
    [ -x "$root/bin/kubectl-$name$exe" ] || fail "$m: $pl: krew did not link an executable $root/bin/kubectl-$name$exe"
  done
done
echo "krew-check: krew installs ${manifests[*]} on ${platforms[*]}, each with its LICENSE"

# 5. This repository as a custom krew index, the archives served over HTTP as a release serves them.
# The server prints its port, chosen by the kernel, once it listens: reading it is the wait.
mkfifo "$work/port"
python3 -c '
import functools, http.server, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=sys.argv[1]))
print(s.server_address[1], flush=True)
sys.stdout.close()
s.serve_forever()' "$archives" >"$work/port" &
server=$!
read -r port <"$work/port" || fail "the HTTP server for $archives did not start"
index="$work/index"
"$here/tree.sh" "$index"
(cd "$index" && KREW_URL="http://127.0.0.1:$port" "$here/manifests.sh" "$version" "$sums" plugins/*.yaml)
git -C "$index" init -q -b main
git -C "$index" add -A
git -C "$index" -c user.name=krew-check -c user.email=krew-check@localhost commit -q -m "the tree under test, plugins/ served from 127.0.0.1:$port"
root="$work/krew-index"
krew() { KREW_ROOT=$root KREW_NO_UPGRADE_CHECK=1 "$tools/krew" "$@" </dev/null 2>&1; }
out=$(krew index add mlkube "file://$index") || fail "kubectl krew index add mlkube file://$index refuses the repository as an index:
$out"
names=()
for m in "${manifests[@]}"; do names+=("mlkube/$(basename "$m" .yaml)"); done
out=$(krew install "${names[@]}") || fail "kubectl krew install ${names[*]} from the repository as an index failed ($host):
$out"
for m in "${manifests[@]}"; do
  name=$(basename "$m" .yaml)
  out=$("$root/bin/kubectl-$name" version --client 2>&1) || fail "$m: $root/bin/kubectl-$name version --client failed: $out"
  grep -q -- "$version" <<<"$out" || fail "$m: $root/bin/kubectl-$name version --client does not report $version: $out"
done
echo "krew-check: krew index add mlkube <this repository>; krew install ${names[*]} ($host) from http://127.0.0.1:$port; both report $version"

# 6. kubectl finds the plugins krew installed from the index and runs them.
run_kubectl() {
  env -i HOME="$work/home" PATH="$root/bin:/usr/local/bin:/usr/bin:/bin" KUBECONFIG="$work/no-kubeconfig" "$kubectl" "$@" </dev/null
}
plugins=$(run_kubectl plugin list --name-only 2>&1) || true
for m in "${manifests[@]}"; do
  name=$(basename "$m" .yaml)
  grep -qx "kubectl-$name" <<<"$plugins" ||
    fail "$m: kubectl plugin list does not find kubectl-$name on PATH=$root/bin:...: $plugins"
  out=$(run_kubectl "$name" --help 2>&1) || fail "$m: kubectl $name --help failed through plugin discovery:
$out"
  grep -q "kubectl $name" <<<"$out" || fail "$m: kubectl $name --help does not show the plugin's usage:
$out"
  out=$(run_kubectl "$name" version --client 2>&1) || fail "$m: kubectl $name version --client failed: $out"
  grep -q -- "$version" <<<"$out" || fail "$m: kubectl $name version --client does not report $version: $out"
done
echo "krew-check: kubectl finds and runs the installed plugins ($host, $version): $(grep '^kubectl-' <<<"$plugins" | tr '\n' ' ')"
