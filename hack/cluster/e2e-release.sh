#!/usr/bin/env bash
# make e2e-release: mlkube installed the way users install a release, from a real registry, and the
# e2e suite on it twice: once installed with the release's bundle, once with the Helm chart.
#
# Debian's docker-registry runs on this machine (hack/cluster/registry.sh); make release builds every
# shipped image for amd64 and arm64, pushes them there and renders a bundle pinned by digest. The
# cluster is the local provider, whose nodes reach this machine's registry at its bridge address
# over plain HTTP. mlkube's shipped images (manager, node agent, io shim, code runtime) are not
# preloaded: the nodes pull them from the registry. The suite's own images (test servers, the
# example transformers its Transforms name, the MxJob workload) are preloaded as in make e2e.
# The bundle's install runs the tests an install changes (MLKUBE_E2E_SCOPE=install,
# e2e/suite/scope_test.go). The chart's first has to render the bundle's objects from the release's
# values (hack/verify/chartdiff, as make verify checks the dev bundle), then runs the tests of what
# Helm changes (MLKUBE_E2E_SCOPE=chart). MLKUBE_E2E_SCOPE= (empty) runs the whole suite on both,
# without the benchmark round. With MLKUBE_E2E_KUBECONFIG (the local cluster make e2e kept) it
# replaces that cluster's dev install instead of bringing a cluster up, and leaves it up.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
export MLKUBE_CLUSTER_PROVIDER=local
version=${MLKUBE_RELEASE_VERSION:-v0.0.0-e2e}
registry=10.250.0.1:5000 # e2e/cluster/local Plan.Registry(): this machine on the nodes' bridge
out=_output/release/$version

scope=install
[ -z "${E2E_RUN:-}" ] || scope= # E2E_RUN picks its own tests
scope=${MLKUBE_E2E_SCOPE-$scope}
kubeconfig=${MLKUBE_E2E_KUBECONFIG:-}
if [ -n "$kubeconfig" ]; then
  # A local cluster make e2e kept (MLKUBE_E2E_KEEP=1), as .ci/run passes it on: its dev install
  # is removed first, and the release installed in its place. The nodes hold the dev images under
  # other names: the release's, named by the registry and digest, are still pulled from it.
  if [ "$kubeconfig" != "$(go run ./e2e/cmd/cluster kubeconfig)" ]; then
    echo "e2e-release: MLKUBE_E2E_KUBECONFIG=$kubeconfig is not the local cluster's: only its nodes reach this machine's registry" >&2
    exit 1
  fi
  echo "== the dev install removed from $kubeconfig"
  KUBECONFIG=$kubeconfig hack/cluster/kubectl.sh delete --wait=true --timeout=300s --ignore-not-found -f manifests/install.yaml
  trap 'hack/cluster/registry.sh stop || true' EXIT
else
  make images
  MLKUBE_E2E_KUEUE=${MLKUBE_E2E_KUEUE:-0} go run ./e2e/cmd/cluster up
  cleanup() {
    hack/cluster/registry.sh stop || true
    [ -n "${MLKUBE_E2E_KEEP:-}" ] || go run ./e2e/cmd/cluster down
  }
  trap cleanup EXIT
  shipped='mlkube_(manager|node-agent|io-shim|runtime-python[0-9.]*)_dev\.tar$'
  # No scope trains with PyTorch: its image (most of the bytes) is loaded only for the whole suite.
  [ -z "$scope" ] || shipped="$shipped|_e2e-torch_"
  mapfile -t preload < <(ls _output/images/*.tar | grep -Ev "$shipped")
  go run ./e2e/cmd/cluster load-images "${preload[@]}"
  kubeconfig=$(go run ./e2e/cmd/cluster kubeconfig)
fi
echo "== cluster ready after $(( $(date +%s) - start ))s"

hack/cluster/registry.sh start
# Without the krew archives: nothing here installs them, and make krew-check builds them with the
# same scripts. On a fresh machine they were six cross-compiles of the plugins.
make release REGISTRY="$registry/mlkube" VERSION="$version" RELEASE_INSECURE=1 RELEASE_KREW=0
echo "== release $version pushed after $(( $(date +%s) - start ))s:"
cat "$out/images.txt"

# The chart's values for the same images, each pinned by the digest the release pushed.
values=$out/values.yaml
# With them the chart renders the release bundle's objects, exactly: its run below needs only the
# tests of what Helm itself changes.
"$(hack/build/pinned.sh helm)" template mlkube manifests/chart/mlkube --namespace mlkube-system \
  --values "$values" >_output/release-chart.yaml
go run ./hack/verify/chartdiff -namespace mlkube-system _output/release-chart.yaml "$out/install.yaml"

# The suite runs the Python runtime as a plain io image too: the released one.
MLKUBE_E2E_PYTHON_IMAGE=$(awk '$1 ~ /\/runtime-python3\.11:/ {print $1 "@" $2}' "$out/images.txt")
[ -n "$MLKUBE_E2E_PYTHON_IMAGE" ] || { echo "e2e-release: no runtime-python3.11 in $out/images.txt" >&2; exit 1; }
export MLKUBE_E2E_PYTHON_IMAGE
export MLKUBE_E2E_SCOPE=$scope
[ -n "$MLKUBE_E2E_SCOPE" ] || export E2E_RUN=${E2E_RUN:-.}

echo "== e2e on the release's bundle ($out/install.yaml)"
MLKUBE_BUNDLE=$out/install.yaml MLKUBE_E2E_KUBECONFIG=$kubeconfig hack/cluster/e2e.sh
KUBECONFIG=$kubeconfig hack/cluster/kubectl.sh delete --wait=true --timeout=300s -f "$out/install.yaml"

echo "== e2e on the Helm chart (values: $values)"
[ "$MLKUBE_E2E_SCOPE" != install ] || MLKUBE_E2E_SCOPE=chart
MLKUBE_CHART_VALUES=$values MLKUBE_E2E_KUBECONFIG=$kubeconfig hack/cluster/e2e.sh
echo "== e2e-release passed in $(( $(date +%s) - start ))s"
