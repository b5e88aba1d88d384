#!/usr/bin/env bash
# Deploys manifests/install.yaml to the cluster of $KUBECONFIG and waits for the manager to be
# Ready (its readiness requires the webhook certificates from cert-controller).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${KUBECONFIG:?set KUBECONFIG to the cluster to deploy to}"
# Server-side: the CRDs embed whole pod templates and outgrow client-side apply's annotation.
hack/kubectl.sh apply --server-side --force-conflicts -f manifests/install.yaml
hack/kubectl.sh -n mlkube-system rollout status deploy/mlkube-manager --timeout=300s
