#!/usr/bin/env bash
# Brings the Helm chart (manifests/chart/mlkube) up to date with what 'make manifests' generates:
# the CRDs of manifests/crd/bases into its files/crds, which templates/crds.yaml renders; the node
# agent's generated role and its bindings (manifests/agent/role.yaml, role_binding.yaml) into
# files/agent-rbac, which templates/agent-rbac.yaml renders, so a new +kubebuilder:rbac marker of
# datapath/ reaches the chart as it reaches the bundle; and the release of the VERSION file into
# Chart.yaml (appVersion, the images' default tag, and version without the leading v, as Helm's
# chart versions are SemVer). Everything else in the chart is
# written by hand; make chart-check compares what it renders with manifests/install.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
chart=manifests/chart/mlkube
release=$(tr -d '[:space:]' <VERSION)
rm -f "$chart"/files/crds/*.yaml
cp manifests/crd/bases/*.yaml "$chart/files/crds/"
mkdir -p "$chart/files/agent-rbac"
rm -f "$chart"/files/agent-rbac/*.yaml
cp manifests/agent/role.yaml manifests/agent/role_binding.yaml "$chart/files/agent-rbac/"
sed -i -e "s/^version: .*/version: ${release#v}/" -e "s/^appVersion: .*/appVersion: \"$release\"/" "$chart/Chart.yaml"
