// Package bench measures the data path on a real cluster (`make bench-cluster`): a load generator
// pod on one node drives objects through the node agent's Service to a transformer and back, for
// every communication type, against baselines driven from the same pod in the same run: a bare
// echo pod on the same node reached directly, and the same chain built from bare parts (a TCP
// relay pod in front of the bare echo pod). The object API is measured the same way: a GET of
// objects stored through it against net/http's file server of the same bytes, a PUT against a
// bare Go server writing by the same durable rule, a GET forwarded to another node's agent.
// Every result is checked, length and content. In the same run, `kubectl etl cp` is timed against
// `kubectl cp` (tar over exec) copying a tree of files and one big file each way, with the real
// kubectl, every file's SHA-256 checked after each copy. The test skips unless
// MLKUBE_BENCH_KUBECONFIG names a cluster with mlkube deployed and its images loaded.
package bench
