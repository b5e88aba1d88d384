// Package api holds what mlkube's users and parts agree on: the custom resource types, one
// sub-package per API group and version (etl/v1alpha1, mxnet/v1beta1), and the contracts that are
// not resources: every data path contract (wire) and the MX_CONFIG document MxJob replicas read
// (mxnet/mxconfig). Nothing here depends on the controller, the agent, the SDK or the runtimes.
package api
