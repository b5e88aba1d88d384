package transformrun

import (
	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The webhook configurations in manifests/webhook are generated from these markers.
//
// +kubebuilder:webhook:path=/mutate-etl-mlkube-io-v1alpha1-transformrun,mutating=true,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=transformruns,verbs=create;update,versions=v1alpha1,name=mtransformrun.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-etl-mlkube-io-v1alpha1-transformrun,mutating=false,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=transformruns,verbs=create;update,versions=v1alpha1,name=vtransformrun.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5

// Rules are the TransformRun admission rules.
var Rules = admit.Rules[*v1alpha1.TransformRun]{
	Kind:        v1alpha1.GroupVersion.WithKind("TransformRun").GroupKind(),
	DefaultFunc: Default,
	CreateFunc:  ValidateCreate,
	UpdateFunc:  ValidateUpdate,
	NewObject:   func() *v1alpha1.TransformRun { return &v1alpha1.TransformRun{} },
}
