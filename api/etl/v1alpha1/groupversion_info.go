// Package v1alpha1 holds the Transform API: user transformation code run next to the data, one
// transformer pod per node, fed by the node's data path agent; and TransformRuns, offline
// dataset-to-dataset transforms through a Transform on every node at once.
//
// +kubebuilder:object:generate=true
// +groupName=etl.mlkube.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "etl.mlkube.io", Version: "v1alpha1"}

	// SchemeBuilder registers this package's types with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds this package's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every root type of this package (+kubebuilder:object:root=true) under
// GroupVersion, with the meta types (ListOptions, WatchEvent, ...) a client needs for the version.
func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Transform{}, &TransformList{}, &TransformRun{}, &TransformRunList{}, &ObjectStore{}, &ObjectStoreList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
