#!/usr/bin/env bash
# Fails when the manager binary links what it must not: the transformer SDK, the in-pod runtimes,
# the node agent or the data path's WebSocket and buffer pool. The manager talks to those only
# through the contracts in api/wire; linking them would grow the manager and tie its releases to
# theirs (docs/design/README.md, "The manager's dependency boundary").
set -euo pipefail
cd "$(dirname "$0")/.."
module=github.com/mlkube/mlkube
forbidden="^$module/(sdk|runtimes|internal/ws|internal/bufpool|datapath)(/|$)"
bad=$(go list -deps ./cmd/manager | grep -E "$forbidden" || true)
if [ -n "$bad" ]; then
  echo "verify-deps: cmd/manager links packages it must not (use the contracts in api/wire instead):" >&2
  echo "$bad" | sed 's/^/  /' >&2
  echo "verify-deps: see why with: go list -deps -f '{{.ImportPath}}: {{.Imports}}' ./cmd/manager" >&2
  exit 1
fi
echo "verify-deps: cmd/manager links none of sdk/, runtimes/, internal/ws, internal/bufpool, datapath"
