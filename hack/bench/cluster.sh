#!/usr/bin/env bash
# make bench-cluster: the data path measured on a real cluster (package e2e/bench) that
# hack/cluster/with-cluster.sh brings up, or MLKUBE_E2E_KUBECONFIG's; the tables go to BENCH_OUT/cluster.md
# and into docs/benchmarks.md. MLKUBE_BENCH_SECONDS (a row) and MLKUBE_BENCH_ROUNDS set the length;
# MLKUBE_BENCH_ONLY (a regexp of <path>/<size>x<in flight>) selects rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-_output/bench}
mkdir -p "$out"
run() {
  MLKUBE_BENCH_KUBECONFIG=$KUBECONFIG MLKUBE_BENCH_OUT=$1 go test -count=1 -v -timeout 90m -run '^TestDataPathOnTheCluster$' ./e2e/bench/
}
export -f run
hack/cluster/with-cluster.sh bench-cluster bash -c "run $(realpath "$out")"
# A selection of rows is not the table docs/benchmarks.md shows.
if [ -z "${MLKUBE_BENCH_ONLY:-}" ]; then
  go run ./hack/bench/benchdoc -block cluster -in "$out/cluster.md"
fi
