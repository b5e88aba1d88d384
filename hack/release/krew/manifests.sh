#!/usr/bin/env bash
# Stamps krew manifests in place with a release: spec.version, each platform's uri and its sha256,
# the one of the archive the uri names, taken from ARCHIVE_DIR/SHA256SUMS (hack/release/krew/archives.sh
# writes it). The uri is KREW_URL/<archive> when KREW_URL is set (where a release publishes its
# archives: make release's ARCHIVES_URL; krew-check's local server), else the manifest's own GitHub
# release URL with VERSION in it. `make krew` runs it on plugins/*.yaml; `make krew-check` runs it
# on copies and fails when they differ from plugins/*.yaml.
#
# usage: [KREW_URL=https://host/path] hack/release/krew/manifests.sh VERSION ARCHIVE_DIR MANIFEST...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 VERSION ARCHIVE_DIR MANIFEST..." >&2; exit 2; }
version=$1 archives=$2 url=${KREW_URL:-}
shift 2
url=${url%/}
[ -f "$archives/SHA256SUMS" ] || { echo "krew: $archives/SHA256SUMS is missing; run 'make krew'" >&2; exit 1; }
for m in "$@"; do
  tmp=$(mktemp "$m.XXXXXX")
  if ! awk -v version="$version" -v url="$url" -v sums="$archives/SHA256SUMS" -v manifest="$m" '
    BEGIN { while ((getline l < sums) > 0) { split(l, f, / +/); sha[f[2]] = f[1] } }
    function fail(msg) { print "krew: " manifest ":" NR ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    function prefix() { match($0, /^[ -]*[a-z0-9]+: */); return substr($0, 1, RLENGTH) }
    /^ +version: / { $0 = prefix() version }
    /^[ -]+uri: / {
      n = split($0, parts, "/"); archive = parts[n]
      if (url != "") $0 = prefix() url "/" archive
      else if (!sub(/\/releases\/download\/[^\/]+\//, "/releases/download/" version "/"))
        fail("uri is not a release download URL (.../releases/download/<version>/<archive>); set KREW_URL to where the archives are published")
      if (!(archive in sha)) fail("uri names " archive ", which is not among the archives make krew builds")
    }
    /^[ -]+sha256: / {
      if (archive == "") fail("sha256 comes before its platform'\''s uri; write uri first")
      $0 = prefix() sha[archive]; archive = ""
    }
    { print }
    END { if (!failed && archive != "") fail("a platform has a uri but no sha256") }
  ' "$m" >"$tmp"; then
    rm -f "$tmp"
    exit 1
  fi
  cat "$tmp" >"$m" # keeps the manifest's own mode
  rm -f "$tmp"
done
