#!/usr/bin/env bash
# make e2e-kind: make e2e on a kind cluster, on machines with or without a container engine. Where
# no engine answers, Debian's docker.io is started for the run and stopped after it
# (hack/cluster/engine.sh); where kind's published node image cannot be pulled, MLKUBE_KIND_NODE_IMAGE=build
# (the default when this script started the engine) builds the registry-free one
# (hack/cluster/kind-node-image.sh). Other arguments go to make e2e's environment unchanged.
# The suite runs the tests a provider changes (MLKUBE_E2E_SCOPE=provider, e2e/suite/scope_test.go);
# MLKUBE_E2E_SCOPE= (empty) runs all of it.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
image=${MLKUBE_KIND_NODE_IMAGE:-}
if ! docker info >/dev/null 2>&1; then
  hack/cluster/engine.sh start
  trap 'hack/cluster/engine.sh stop' EXIT
  # An engine of ours is on a machine that has none: it reaches no registry either.
  image=${image:-build}
fi
if [ "$image" = build ]; then
  image=$(hack/cluster/kind-node-image.sh)
  echo "== kind node image $image ready after $(( $(date +%s) - start ))s"
fi
scope=provider
[ -z "${E2E_RUN:-}" ] || scope= # E2E_RUN picks its own tests
scope=${MLKUBE_E2E_SCOPE-$scope}
# No scope trains with PyTorch: its image (most of the bytes) is loaded only for the whole suite.
[ -z "$scope" ] || export MLKUBE_E2E_NO_PRELOAD=_e2e-torch_
MLKUBE_E2E_SCOPE=$scope MLKUBE_CLUSTER_PROVIDER=kind MLKUBE_KIND_NODE_IMAGE=$image hack/cluster/e2e.sh
