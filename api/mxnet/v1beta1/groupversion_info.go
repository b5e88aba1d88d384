// Package v1beta1 holds the MxJob API: distributed MXNet training with SCHEDULER, SERVER and
// WORKER replicas wired together by the DMLC environment contract.
//
// +kubebuilder:object:generate=true
// +groupName=mxnet.mlkube.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "mxnet.mlkube.io", Version: "v1beta1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every root type of this package (+kubebuilder:object:root=true) under
// GroupVersion, with the meta types (ListOptions, WatchEvent, ...) a client needs for the version.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &MxJob{}, &MxJobList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
