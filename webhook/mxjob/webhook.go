package mxjob

import (
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The webhook configurations in manifests/webhook are generated from these markers.
//
// +kubebuilder:webhook:path=/mutate-mxnet-mlkube-io-v1beta1-mxjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=mxnet.mlkube.io,resources=mxjobs,verbs=create;update,versions=v1beta1,name=mmxjob.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-mxnet-mlkube-io-v1beta1-mxjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=mxnet.mlkube.io,resources=mxjobs,verbs=create;update,versions=v1beta1,name=vmxjob.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5

// Rules are the MxJob admission rules.
var Rules = admit.Rules[*v1beta1.MxJob]{
	Kind:         v1beta1.GroupVersion.WithKind("MxJob").GroupKind(),
	DefaultFunc:  Default,
	CreateFunc:   ValidateCreate,
	UpdateFunc:   ValidateUpdate,
	NewObject:    func() *v1beta1.MxJob { return &v1beta1.MxJob{} },
	WarningsFunc: Warnings,
}
