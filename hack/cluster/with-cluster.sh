#!/usr/bin/env bash
# hack/cluster/with-cluster.sh WHAT COMMAND...: images, a cluster (or the one MLKUBE_E2E_KUBECONFIG names),
# the bundle deployed, then COMMAND with KUBECONFIG set; diagnostics when it fails, teardown after.
# MLKUBE_E2E_KEEP=1 keeps the cluster; MLKUBE_E2E_NO_PRELOAD, a grep -E pattern, leaves out the image
# tarballs that no test of the run pulls. make e2e and make bench-cluster run through it; WHAT names
# the run in its messages.
set -euo pipefail
cd "$(dirname "$0")/../.."
what=$1
shift
start=$(date +%s)
kubeconfig=${MLKUBE_E2E_KUBECONFIG:-}
if [ -z "$kubeconfig" ]; then
  make images
  go run ./e2e/cmd/cluster up
  if [ -z "${MLKUBE_E2E_KEEP:-}" ]; then trap 'go run ./e2e/cmd/cluster down' EXIT; fi
  mapfile -t preload < <(ls _output/images/*.tar | grep -Ev "${MLKUBE_E2E_NO_PRELOAD:-^$}")
  go run ./e2e/cmd/cluster load-images "${preload[@]}"
  kubeconfig=$(go run ./e2e/cmd/cluster kubeconfig)
  echo "== cluster ready after $(( $(date +%s) - start ))s"
fi
export KUBECONFIG=$kubeconfig
diagnostics() {
  echo "== $what failed; cluster state:"
  hack/cluster/kubectl.sh get nodes -o wide || true
  hack/cluster/kubectl.sh get pods -A -o wide || true
  hack/cluster/kubectl.sh get events -A --sort-by=.lastTimestamp | tail -60 || true
  hack/cluster/kubectl.sh -n mlkube-system logs deploy/mlkube-manager --tail=200 || true
  # Last, in a line each, what most often says why: the manager's last errors, pods not ready, and
  # the newest warnings.
  hack/cluster/kubectl.sh -n mlkube-system logs deploy/mlkube-manager --tail=500 2>/dev/null |
    grep -oE '"msg":"([^"\\]|\\.)*","error":"([^"\\]|\\.)*"' | tail -4 | sed 's/^/diagnostics: manager: /' || true
  hack/cluster/kubectl.sh get pods -A --no-headers 2>/dev/null |
    awk '{ split($3, r, "/") } r[1] != r[2] && $4 != "Completed" { print "diagnostics: pod not ready: " $0 }' || true
  hack/cluster/kubectl.sh get events -A --field-selector type=Warning --sort-by=.lastTimestamp --no-headers 2>/dev/null |
    tail -8 | sed 's/^/diagnostics: warning: /' || true
}
if ! hack/cluster/deploy.sh; then diagnostics; exit 1; fi
echo "== deployed after $(( $(date +%s) - start ))s"
if ! "$@"; then
  diagnostics
  exit 1
fi
echo "== $what passed in $(( $(date +%s) - start ))s"
