#!/usr/bin/env bash
# make e2e: images, a cluster (or the one MLKUBE_E2E_KUBECONFIG names), the bundle deployed, the
# suite, diagnostics on failure, teardown. MLKUBE_E2E_KEEP=1 keeps the cluster afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
kubeconfig=${MLKUBE_E2E_KUBECONFIG:-}
if [ -z "$kubeconfig" ]; then
  make images
  go run ./e2e/cmd/cluster up
  if [ -z "${MLKUBE_E2E_KEEP:-}" ]; then trap 'go run ./e2e/cmd/cluster down' EXIT; fi
  go run ./e2e/cmd/cluster load-images
  kubeconfig=$(go run ./e2e/cmd/cluster kubeconfig)
  echo "== cluster ready after $(( $(date +%s) - start ))s"
fi
export KUBECONFIG=$kubeconfig
diagnostics() {
  echo "== e2e failed; cluster state:"
  hack/kubectl.sh get nodes -o wide || true
  hack/kubectl.sh get pods -A -o wide || true
  hack/kubectl.sh get events -A --sort-by=.lastTimestamp | tail -60 || true
  hack/kubectl.sh -n mlkube-system logs deploy/mlkube-manager --tail=200 || true
}
if ! hack/deploy.sh; then diagnostics; exit 1; fi
echo "== deployed after $(( $(date +%s) - start ))s"
if ! MLKUBE_E2E_KUBECONFIG=$kubeconfig MLKUBE_REQUIRE_E2E=1 go test -count=1 -v -timeout 45m ./e2e/suite/ ${E2E_RUN:+-run "$E2E_RUN"}; then
  diagnostics
  exit 1
fi
echo "== e2e passed in $(( $(date +%s) - start ))s"
