// Package objectstore holds the admission rules of ObjectStores: defaulting and validation as
// plain functions over the API types, the creator's access to the keys, and the thin
// controller-runtime adapter that serves them.
package objectstore

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The webhook configurations in manifests/webhook are generated from these markers.
//
// +kubebuilder:webhook:path=/mutate-etl-mlkube-io-v1alpha1-objectstore,mutating=true,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=objectstores,verbs=create;update,versions=v1alpha1,name=mobjectstore.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhook:path=/validate-etl-mlkube-io-v1alpha1-objectstore,mutating=false,failurePolicy=fail,sideEffects=None,groups=etl.mlkube.io,resources=objectstores,verbs=create;update,versions=v1alpha1,name=vobjectstore.mlkube.io,admissionReviewVersions=v1,timeoutSeconds=5

// Rules are the ObjectStore admission rules, without the access check (NewRules adds it).
var Rules = admit.Rules[*v1alpha1.ObjectStore]{
	Kind:         v1alpha1.GroupVersion.WithKind("ObjectStore").GroupKind(),
	DefaultFunc:  Default,
	CreateFunc:   Validate,
	UpdateFunc:   func(_, s *v1alpha1.ObjectStore) field.ErrorList { return Validate(s) },
	NewObject:    func() *v1alpha1.ObjectStore { return &v1alpha1.ObjectStore{} },
	WarningsFunc: Warnings,
}

// NewRules are Rules with the check, on create and on every update, that the requester may read
// the keys the agents would use for them; c creates the SubjectAccessReviews.
func NewRules(c client.Client) admit.Rules[*v1alpha1.ObjectStore] {
	r := Rules.WithAccess(c, CreatorAccess)
	r.AccessOnUpdate = true
	return r
}
