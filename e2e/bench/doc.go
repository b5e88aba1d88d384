// Package bench measures the data path on a real cluster (`make bench-cluster`): a load generator
// pod on one node drives objects through the node agent's Service to a transformer and back, for
// every communication type, against baselines driven from the same pod in the same run: a bare
// echo pod on the same node reached directly, and the same chain built from bare parts (a TCP
// relay pod in front of the bare echo pod). Every result is checked, length and content. The test
// skips unless MLKUBE_BENCH_KUBECONFIG names a cluster with mlkube deployed and its images loaded.
package bench
