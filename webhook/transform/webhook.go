package transform

import (
	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The webhook configurations in manifests/webhook are generated from these markers.
//
// +kubebuilder:webhook:path=/mutate-etl-mlkube-io-v1alpha1-transform,mutating=true,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=transforms,verbs=create;update,versions=v1alpha1,name=mtransform.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-etl-mlkube-io-v1alpha1-transform,mutating=false,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=transforms,verbs=create;update,versions=v1alpha1,name=vtransform.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5

// Rules are the Transform admission rules.
var Rules = admit.Rules[*v1alpha1.Transform]{
	Kind:        v1alpha1.GroupVersion.WithKind("Transform").GroupKind(),
	DefaultFunc: Default,
	CreateFunc:  ValidateCreate,
	UpdateFunc:  ValidateUpdate,
	NewObject:   func() *v1alpha1.Transform { return &v1alpha1.Transform{} },
}
