// Package access decides who may use the node data path: it authenticates a caller's
// ServiceAccount token with a TokenReview (for the data path's own audience) and authorizes each
// request with a SubjectAccessReview against the cluster's RBAC, the kube-rbac-proxy pattern.
// Both answers are cached for a short, bounded time in bounded maps, so a busy caller pays a map
// lookup per request, not an API call; concurrent misses for the same key share one call. The calls
// themselves share a token bucket (Options.QPS, Burst): past it a request is refused with 429
// rather than reviewed, so bogus tokens and names cannot flood the API server.
//
// The RBAC model (docs/datapath-rbac.md) names virtual resources of the etl.mlkube.io group, which
// RBAC rules can grant like any other resource:
//
//	use    transforms/<name>   in N: run N's Transform <name> (each stage of a pipeline)
//	get    objects             in N: read N's data (objects named from the data root, offline sources,
//	                                 offline runs' progress)
//	create objects             in N: write N's data (offline destinations; abort N's runs)
//	get    /v1/stats, /metrics       the agents' counters and metrics (non-resource URLs)
package access
