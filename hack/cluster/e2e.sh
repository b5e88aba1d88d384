#!/usr/bin/env bash
# make e2e: the e2e suite on a cluster hack/cluster/with-cluster.sh brings up (or MLKUBE_E2E_KUBECONFIG's),
# then one short round of the cluster benchmark, so its every-result-checked rows keep working
# (its figures are make bench-cluster's business). E2E_RUN selects tests by go test's -run, or
# MLKUBE_E2E_SCOPE one of the suite's lists (e2e/suite/scope_test.go); either skips the benchmark round.
#
# The whole suite on a cluster of its own runs first without Kueue (MLKUBE_E2E_KUEUE=later): a
# cluster without it runs every other test unchanged. Then Kueue is installed as an admin installs
# it after mlkube, the manager is restarted to find it (it looks when it starts), and the Kueue
# tests run (MLKUBE_E2E_SCOPE=kueue). MLKUBE_E2E_KUEUE=1 installs Kueue with the cluster instead,
# 0 never (e2e/cmd/cluster).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${MLKUBE_E2E_KUEUE+set}${E2E_RUN:-}${MLKUBE_E2E_SCOPE:-}${MLKUBE_E2E_KUBECONFIG:-}" ]; then
  export MLKUBE_E2E_KUEUE=later
fi
suite() {
  # The function runs under bash -c, without set -e: a failed suite must end it, or a passing
  # benchmark round after it would hide the failure.
  MLKUBE_E2E_KUBECONFIG=$KUBECONFIG MLKUBE_REQUIRE_E2E=1 go test -count=1 -v -timeout 45m ./e2e/suite/ ${E2E_RUN:+-run "$E2E_RUN"} || return
  if [ "${MLKUBE_E2E_KUEUE:-}" = later ]; then
    echo "== Kueue installed after mlkube, the manager restarted, then the Kueue tests"
    go run ./e2e/cmd/cluster kueue || return
    hack/cluster/kubectl.sh -n mlkube-system rollout restart deployment/mlkube-manager || return
    hack/cluster/deploy.sh || return # waits for the restarted manager, then for its webhooks to answer
    MLKUBE_E2E_KUEUE=1 MLKUBE_E2E_SCOPE=kueue MLKUBE_E2E_KUBECONFIG=$KUBECONFIG MLKUBE_REQUIRE_E2E=1 \
      go test -count=1 -v -timeout 15m ./e2e/suite/ || return
  fi
  if [ -z "${E2E_RUN:-}${MLKUBE_E2E_SCOPE:-}" ]; then
    MLKUBE_BENCH_KUBECONFIG=$KUBECONFIG MLKUBE_BENCH_SECONDS=1 MLKUBE_BENCH_ROUNDS=1 \
      MLKUBE_BENCH_CP_FILES=20 MLKUBE_BENCH_CP_FILE_KIB=64 MLKUBE_BENCH_CP_BIG_MIB=8 \
      MLKUBE_BENCH_PY_SMALL=200 MLKUBE_BENCH_PY_LARGE=16 \
      go test -count=1 -v -timeout 20m -run '^TestDataPathOnTheCluster$' ./e2e/bench/
  fi
}
export -f suite
export E2E_RUN MLKUBE_E2E_SCOPE
hack/cluster/with-cluster.sh e2e bash -c suite
