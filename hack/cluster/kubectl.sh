#!/usr/bin/env bash
# Runs the kubectl `hack/build/pinned.sh kube` builds (cached), matching the cluster's version.
set -euo pipefail
bin=$("$(dirname "$0")/../build/pinned.sh" kube kubectl)
exec "$bin/kubectl" "$@"
