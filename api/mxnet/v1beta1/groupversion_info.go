// Package v1beta1 holds the MxJob API: distributed MXNet training with SCHEDULER, SERVER and
// WORKER replicas wired together by the DMLC environment contract.
//
// +kubebuilder:object:generate=true
// +groupName=mxnet.mlkube.io
package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "mxnet.mlkube.io", Version: "v1beta1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
