#!/usr/bin/env bash
# Fails when the manager binary links a package of the project outside api/, controller/, webhook/
# and internal/, or the data path's WebSocket and buffer pool (internal/ws, internal/bufpool). The
# manager reaches the node agent (datapath/), the transformer SDK (sdk/) and the in-pod runtimes
# (runtimes/) only through the contracts in api/wire: linking them would grow the manager and tie
# its releases to theirs.
set -euo pipefail
cd "$(dirname "$0")/../.."
module=github.com/mlkube/mlkube
bad=$(go list -deps ./cmd/manager | awk -v m="$module/" '
	index($0, m) != 1 { next } # not the project'"'"'s
	{ p = substr($0, length(m) + 1) }
	p ~ /^internal\/(ws|bufpool)(\/|$)/ || p !~ /^(cmd\/manager|api|controller|webhook|internal)(\/|$)/ { print }')
if [ -n "$bad" ]; then
  echo "verify-deps: cmd/manager links packages it must not (use the contracts in api/wire instead):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  echo "verify-deps: see why with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/manager" >&2
  exit 1
fi
echo "verify-deps: cmd/manager links only api/, controller/, webhook/ and internal/ (not internal/ws, internal/bufpool)"
