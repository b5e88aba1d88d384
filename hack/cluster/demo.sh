#!/usr/bin/env bash
# make demo: from a fresh machine to a cluster running mlkube with a sample MxJob and Transform.
# The cluster is kept; `make cluster-down` removes it.
set -euo pipefail
cd "$(dirname "$0")/../.."
hack/build/install-deps.sh
make images
go run ./e2e/cmd/cluster up
go run ./e2e/cmd/cluster load-images
KUBECONFIG=$(go run ./e2e/cmd/cluster kubeconfig)
export KUBECONFIG
hack/cluster/deploy.sh
kubectl=hack/cluster/kubectl.sh
$kubectl apply -f manifests/samples/mxjob-dist.yaml
$kubectl wait --for=condition=Succeeded mxjob/sample-dist --timeout=300s
$kubectl get mxjobs
$kubectl logs sample-dist-worker-0 | tail -3
$kubectl apply -f manifests/samples/transform-md5.yaml
$kubectl wait --for=jsonpath={.status.stage}=Running transform/md5 --timeout=120s
$kubectl get transforms -o wide
cat <<MSG

mlkube is running. Try:
  export KUBECONFIG=$KUBECONFIG
  hack/cluster/kubectl.sh get mxj,etl -A
  make cluster-down      # remove the cluster
MSG
