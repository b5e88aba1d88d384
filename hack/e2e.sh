#!/usr/bin/env bash
# make e2e: the e2e suite on a cluster hack/with-cluster.sh brings up (or MLKUBE_E2E_KUBECONFIG's).
# E2E_RUN selects tests by go test's -run.
set -euo pipefail
cd "$(dirname "$0")/.."
suite() {
  MLKUBE_E2E_KUBECONFIG=$KUBECONFIG MLKUBE_REQUIRE_E2E=1 go test -count=1 -v -timeout 45m ./e2e/suite/ ${E2E_RUN:+-run "$E2E_RUN"}
}
export -f suite
export E2E_RUN
hack/with-cluster.sh e2e bash -c suite
