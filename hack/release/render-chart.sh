#!/usr/bin/env bash
# Brings the Helm chart (manifests/chart/mlkube) up to date with what 'make manifests' generates:
# the CRDs of manifests/crd/bases into its files/crds, which templates/crds.yaml renders, and the
# release of the VERSION file into Chart.yaml (appVersion, the images' default tag, and version
# without the leading v, as Helm's chart versions are SemVer). Everything else in the chart is
# written by hand; make chart-check compares what it renders with manifests/install.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
chart=manifests/chart/mlkube
release=$(tr -d '[:space:]' <VERSION)
rm -f "$chart"/files/crds/*.yaml
cp manifests/crd/bases/*.yaml "$chart/files/crds/"
sed -i -e "s/^version: .*/version: ${release#v}/" -e "s/^appVersion: .*/appVersion: \"$release\"/" "$chart/Chart.yaml"
