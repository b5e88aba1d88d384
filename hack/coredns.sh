#!/usr/bin/env bash
# Builds CoreDNS from github.com/coredns/coredns through the Go module proxy, because this project's
# machines cannot pull the CoreDNS image. The static binary is cached by version under
# $MLKUBE_CACHE/coredns-<version>/bin, so only the first run pays for the build (~3.5 min cold).
#
# usage: hack/coredns.sh
# prints the path of the coredns binary on stdout.
set -euo pipefail

COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
CACHE=${MLKUBE_CACHE:-$HOME/.cache/mlkube}
bin="$CACHE/coredns-$COREDNS_VERSION/bin"

if [ ! -x "$bin/coredns" ]; then
  echo "building coredns $COREDNS_VERSION (first run only; cached in $bin)" >&2
  mkdir -p "$bin"
  # go install pkg@version needs no scratch module: CoreDNS' go.mod has no replace directives.
  GOBIN="$bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" \
    "github.com/coredns/coredns@$COREDNS_VERSION" >&2
fi
echo "$bin/coredns"
