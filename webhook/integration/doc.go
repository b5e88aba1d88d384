// Package integration tests the admission webhooks through a real kube-apiserver and etcd
// (controller-runtime envtest): the real manager serves them with certificates from
// cert-controller's rotator, and the API server calls them as it would in a cluster.
package integration
