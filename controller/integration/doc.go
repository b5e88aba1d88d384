// Package integration tests the manager through a real kube-apiserver and etcd
// (controller-runtime envtest): the production manager serves the webhooks with certificates from
// cert-controller's rotator and runs the controllers; pod phases are patched by the tests, as no
// kubelet runs.
package integration
