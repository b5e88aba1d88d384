#!/usr/bin/env bash
# Fails when the Helm chart (manifests/chart/mlkube) and the kustomize bundle
# (manifests/install.yaml) would install different objects: helm lint, then helm template with the
# default values compared object by object with the bundle (hack/verify/chartdiff prints each
# difference). Also lints the chart with every value set (hack/verify/chart-values.yaml). Helm is
# the pinned build, `hack/build/pinned.sh helm`.
set -euo pipefail
cd "$(dirname "$0")/../.."
chart=manifests/chart/mlkube
ns=mlkube-system
helm=$(hack/build/pinned.sh helm)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$helm" lint --strict "$chart" --namespace "$ns"
"$helm" lint --strict "$chart" --namespace other --values hack/verify/chart-values.yaml
# The bundle's images are tagged dev (manifests/manager/kustomization.yaml,
# manifests/agent/daemonset.yaml), the chart's default to its appVersion: compare the rest.
"$helm" template mlkube "$chart" --namespace "$ns" \
  --set manager.image.tag=dev --set agent.image.tag=dev >"$tmp/chart.yaml"
go run ./hack/verify/chartdiff -namespace "$ns" "$tmp/chart.yaml" manifests/install.yaml
