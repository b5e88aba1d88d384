#!/usr/bin/env bash
# Deploys manifests/install.yaml to the cluster of $KUBECONFIG and returns once the API server can
# call mlkube's webhooks. A finished rollout is not enough: the manager is Ready before the webhook
# Service routes to it from the API server, and a create in that gap is refused with "connection
# refused". So after the rollout, server-side dry-run creates of a valid MxJob and a valid Transform
# (manifests/webhook-probe.yaml) are retried until both pass, or the deadline says what failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${KUBECONFIG:?set KUBECONFIG to the cluster to deploy to}"
kubectl=hack/cluster/kubectl.sh
WEBHOOK_DEADLINE=${WEBHOOK_DEADLINE:-180}
# What is installed: MLKUBE_BUNDLE (default the repository's manifests/install.yaml; a release's
# install.yaml from make release), or, with MLKUBE_CHART_VALUES set to a values file, the Helm
# chart manifests/chart/mlkube with those values.
# MLKUBE_KUBELET_DIR: the kubelets' root directory when it is not /var/lib/kubelet, with
# $(NODE_NAME) for the node's name where each kubelet has its own; the
# data.mlkube.io CSI driver registers and mounts there (docs/install.md#kubelet-directory).
# The local test cluster writes its own next to its kubeconfig.
kubelet_dir=${MLKUBE_KUBELET_DIR:-}
if [ -z "$kubelet_dir" ] && [ -f "$(dirname "$KUBECONFIG")/kubelet-dir" ]; then
  kubelet_dir=$(cat "$(dirname "$KUBECONFIG")/kubelet-dir")
fi
kubelet_dir=${kubelet_dir:-/var/lib/kubelet}
kubelet_host_dir=${kubelet_dir%%\$\(NODE_NAME\)*}
kubelet_host_dir=${kubelet_host_dir%/}
bundle=${MLKUBE_BUNDLE:-manifests/install.yaml}
if [ "$kubelet_dir" != /var/lib/kubelet ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  sed -e "s|--kubelet-dir=/var/lib/kubelet\$|--kubelet-dir=$kubelet_dir|" \
    -e "s#\(mountPath\|path\): /var/lib/kubelet\$#\1: ${kubelet_host_dir:-/}#" "$bundle" >"$tmp/install.yaml"
  bundle=$tmp/install.yaml
  grep -qF -e "--kubelet-dir=$kubelet_dir" "$bundle" ||
    { echo "deploy: found no --kubelet-dir=/var/lib/kubelet in ${MLKUBE_BUNDLE:-manifests/install.yaml} to set to $kubelet_dir" >&2; exit 1; }
fi
if [ -n "${MLKUBE_CHART_VALUES:-}" ]; then
  # Helm cannot label the namespace it creates: the manager's gets the bundle's restricted Pod
  # Security labels first, and the release goes into it.
  $kubectl create namespace mlkube-system --dry-run=client -o yaml | $kubectl apply -f -
  $kubectl label --overwrite ns mlkube-system app.kubernetes.io/name=mlkube \
    pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/warn=restricted
  "$(hack/build/pinned.sh helm)" upgrade --install mlkube manifests/chart/mlkube --namespace mlkube-system \
    --values "$MLKUBE_CHART_VALUES" --set-string "agent.kubeletDir=$kubelet_dir" --kubeconfig "$KUBECONFIG"
else
  # Server-side: the CRDs embed whole pod templates and outgrow client-side apply's annotation.
  $kubectl apply --server-side --force-conflicts -f "$bundle"
fi
$kubectl -n mlkube-system rollout status deploy/mlkube-manager --timeout=300s

# The e2e clusters' S3 server (e2e/cluster/s3-server.yaml) is on the Service network, which the
# agents refuse by default: allow its one address, as a cluster admin would for an in-cluster
# store (docs/transforms.md#from-an-object-store).
if s3ip=$($kubectl -n mlkube-e2e-s3 get service s3 -o jsonpath='{.spec.clusterIP}' 2>/dev/null) && [ -n "$s3ip" ]; then
  flag="--object-store-allowed-cidrs=$s3ip/32"
  if ! $kubectl -n mlkube-datapath get daemonset node-agent -o jsonpath='{.spec.template.spec.containers[0].args}' | grep -qF -e "$flag"; then
    $kubectl -n mlkube-datapath patch daemonset node-agent --type json \
      -p "[{\"op\":\"add\",\"path\":\"/spec/template/spec/containers/0/args/-\",\"value\":\"$flag\"}]"
  fi
  $kubectl -n mlkube-datapath rollout status daemonset/node-agent --timeout=300s
fi

deadline=$(( $(date +%s) + WEBHOOK_DEADLINE ))
tries=0
until out=$($kubectl create --dry-run=server -o name -f manifests/webhook-probe.yaml 2>&1); do
  tries=$(( tries + 1 ))
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "deploy: the API server could not call mlkube's webhooks within ${WEBHOOK_DEADLINE}s ($tries tries); last answer:" >&2
    echo "$out" >&2
    echo "deploy: check 'hack/cluster/kubectl.sh -n mlkube-system get pods,endpointslices' and the manager's logs" >&2
    exit 1
  fi
  sleep 1
done
echo "deploy: webhooks answer for MxJob and Transform (dry-run create passed after $tries retries)"
