#!/usr/bin/env bash
# Runs the kubectl hack/build/kube-binaries.sh builds (cached), matching the cluster's version.
set -euo pipefail
bin=$("$(dirname "$0")/../build/kube-binaries.sh" kubectl)
exec "$bin/kubectl" "$@"
