#!/usr/bin/env bash
# make bench-cluster: the data path measured on a real cluster (package e2e/bench) that
# hack/cluster/with-cluster.sh brings up, or MLKUBE_E2E_KUBECONFIG's; the tables go to BENCH_OUT/cluster.md
# and into docs/benchmarks.md. MLKUBE_BENCH_SECONDS (a row) and MLKUBE_BENCH_ROUNDS set the length;
# MLKUBE_BENCH_ONLY (a regexp of <path>/<size>x<in flight>, cp/files and cp/big, py/4096 and py/1048576, store) selects rows.
# The kubectl etl cp against kubectl cp comparison copies MLKUBE_BENCH_CP_FILES files of
# MLKUBE_BENCH_CP_FILE_KIB KiB (1000 of 1024) and one of MLKUBE_BENCH_CP_BIG_MIB MiB (1024) each way,
# through this machine's disk: it needs about twice the data free here, and as much on the nodes.
# The in-pod rows of mlkube.torch (py/4096, py/1048576) read MLKUBE_BENCH_PY_SMALL objects of 4 KiB
# (4000) and MLKUBE_BENCH_PY_LARGE of 1 MiB (256) in a PyTorch pod. The store benchmark (store) runs
# a TransformRun from a bucket of the cluster's S3 server through md5 into another against a plain
# minio-go program: MLKUBE_BENCH_STORE_OBJECTS of MLKUBE_BENCH_STORE_KIB KiB (1000 of 1024),
# MLKUBE_BENCH_STORE_WORKERS at a time (4); its table goes to BENCH_OUT/store.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-_output/bench}
mkdir -p "$out"
run() {
  MLKUBE_BENCH_KUBECONFIG=$KUBECONFIG MLKUBE_BENCH_OUT=$1 go test -count=1 -v -timeout 90m -run '^(TestDataPathOnTheCluster|TestStoreRunOnTheCluster)$' ./e2e/bench/
}
export -f run
hack/cluster/with-cluster.sh bench-cluster bash -c "run $(realpath "$out")"
# A selection of rows is not the table docs/benchmarks.md shows.
if [ -z "${MLKUBE_BENCH_ONLY:-}" ]; then
  go run ./hack/bench/benchdoc -block cluster -in "$out/cluster.md"
fi
