// Package kueue lets Kueue queue and admit MxJobs: each MxJob labelled kueue.x-k8s.io/queue-name
// gets one Workload with a pod set per replica type; the job runs only while Kueue admits the
// Workload as a whole, and is suspended again when Kueue evicts or preempts it.
//
// It follows the contract of Kueue's job framework (pkg/controller/jobframework) step by step:
// the same Workload name, owner reference, finalizer and labels, the same order of decisions in
// a reconcile, and Kueue's own workload and podset packages for every change it makes to a
// Workload or a pod template. It cannot link the job framework itself: that package imports the
// API of every job kind Kueue supports, and one of them (Kubeflow Trainer v2.2.0) does not
// compile against the Kubernetes API mlkube is built on.
//
// The integration is off unless Kueue's Workload API is served when the manager starts; jobs
// without the label are never touched.
package kueue
