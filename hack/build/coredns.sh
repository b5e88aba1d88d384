#!/usr/bin/env bash
# Builds CoreDNS from github.com/coredns/coredns through the Go module proxy, because this project's
# machines cannot pull the CoreDNS image. The build is pinned by hack/build/coredns/go.mod and go.sum
# and cached under $MLKUBE_CACHE/coredns-<version>-<hash of the pins>/bin, so only the first run
# pays for it (~3.5 min cold).
#
# usage: hack/build/coredns.sh
# prints the path of the coredns binary on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=hack/lib/pinned.sh
. "$here/../lib/pinned.sh"

mod="$here/coredns"
version=$(pinned_version "$mod" github.com/coredns/coredns)
bin="$(pinned_cache_dir "$mod" coredns "$version")/bin"
if [ ! -x "$bin/coredns" ]; then
  echo "building coredns $version (first run only; cached in $bin)" >&2
  pinned_build "$mod" "$bin" "" github.com/coredns/coredns
fi
echo "$bin/coredns"
