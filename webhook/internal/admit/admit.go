// Package admit adapts plain defaulting and validation functions to controller-runtime's generic
// admission Defaulter and Validator, so each kind only states its rules.
package admit

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// Rules are the admission rules of one kind.
type Rules[T client.Object] struct {
	Kind         schema.GroupKind
	DefaultFunc  func(T)
	CreateFunc   func(T) field.ErrorList
	UpdateFunc   func(old, obj T) field.ErrorList
	NewObject    func() T
	WarningsFunc func(T) []string // optional
}

var _ admission.Defaulter[client.Object] = Rules[client.Object]{}
var _ admission.Validator[client.Object] = Rules[client.Object]{}

// Default implements admission.Defaulter.
func (r Rules[T]) Default(_ context.Context, obj T) error {
	r.DefaultFunc(obj)
	return nil
}

// ValidateCreate implements admission.Validator.
func (r Rules[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	return r.warnings(obj), r.invalid(obj, r.CreateFunc(obj))
}

// ValidateUpdate implements admission.Validator.
func (r Rules[T]) ValidateUpdate(_ context.Context, old, obj T) (admission.Warnings, error) {
	return r.warnings(obj), r.invalid(obj, r.UpdateFunc(old, obj))
}

// ValidateDelete implements admission.Validator; deletes are always allowed.
func (r Rules[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

// Register serves the rules on the manager's webhook server at controller-runtime's standard
// paths (/mutate-<group>-<version>-<kind>, /validate-…).
func (r Rules[T]) Register(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, r.NewObject()).
		WithDefaulter(r).
		WithValidator(r).
		Complete()
}

// invalid turns field errors into one Invalid status error naming every field, which the API
// server hands to the user as is.
func (r Rules[T]) invalid(obj T, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(r.Kind, obj.GetName(), errs)
}

func (r Rules[T]) warnings(obj T) admission.Warnings {
	if r.WarningsFunc == nil {
		return nil
	}
	return r.WarningsFunc(obj)
}
