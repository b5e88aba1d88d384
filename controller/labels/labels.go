// Package labels holds the labels mlkube puts on everything its controllers create.
package labels

// ManagedBy marks pods and Services made by mlkube's controllers; the manager caches only
// objects carrying it, so its memory does not grow with the cluster's other pods.
const (
	ManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByValue = "mlkube"
)
