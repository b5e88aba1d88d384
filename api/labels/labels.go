// Package labels holds the well-known Kubernetes label keys mlkube puts on what it creates and
// selects on: the controllers set them, the manager's cache, kubectl etl and the node agent's
// manifests select by them.
package labels

// ManagedBy marks pods and Services made by mlkube's controllers; the manager caches only
// objects carrying it, so its memory does not grow with the cluster's other pods.
const (
	ManagedBy      = "app.kubernetes.io/managed-by"
	ManagedByValue = "mlkube"
)

// The recommended application labels, which transformer and node agent pods carry.
const (
	Name      = "app.kubernetes.io/name"
	Component = "app.kubernetes.io/component"
)

// Kueue's labels on a job: the LocalQueue of its namespace it waits in, and the
// WorkloadPriorityClass it is admitted and preempted by. An MxJob carrying QueueName is queued
// by Kueue when Kueue is installed (docs/kueue.md).
const (
	KueueQueueName     = "kueue.x-k8s.io/queue-name"
	KueuePriorityClass = "kueue.x-k8s.io/priority-class"
)
