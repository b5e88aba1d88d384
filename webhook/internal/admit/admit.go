// Package admit adapts plain defaulting and validation functions to controller-runtime's generic
// admission Defaulter and Validator, so each kind only states its rules.
package admit

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/internal/lazylog"
)

// Rules are the admission rules of one kind.
type Rules[T client.Object] struct {
	Kind        schema.GroupKind
	DefaultFunc func(T)
	// CreateDefaultFunc, optional, defaults what only a new object gets (after DefaultFunc).
	CreateDefaultFunc func(T)
	CreateFunc        func(T) field.ErrorList
	UpdateFunc        func(old, obj T) field.ErrorList
	NewObject         func() T
	WarningsFunc      func(T) []string // optional
	// AccessFunc, optional, asks the API server whether the requester may have what a new
	// object would make mlkube do for them (e.g. run a pod as a ServiceAccount). Its error is an
	// answer it could not get, refused as an internal error: the webhook fails closed.
	AccessFunc func(ctx context.Context, req admission.Request, obj T) (field.ErrorList, error)
	// AccessOnUpdate runs AccessFunc on updates too, for kinds whose spec may change and whose
	// every version makes mlkube act for the user (an ObjectStore's endpoint).
	AccessOnUpdate bool
}

// WithAccess returns r with its AccessFunc set to f, whose SubjectAccessReviews c creates.
func (r Rules[T]) WithAccess(c client.Client, f func(ctx context.Context, c client.Client, req admission.Request, obj T) (field.ErrorList, error)) Rules[T] {
	r.AccessFunc = func(ctx context.Context, req admission.Request, obj T) (field.ErrorList, error) {
		return f(ctx, c, req, obj)
	}
	return r
}

var _ admission.Defaulter[client.Object] = Rules[client.Object]{}
var _ admission.Validator[client.Object] = Rules[client.Object]{}

// Default implements admission.Defaulter.
func (r Rules[T]) Default(ctx context.Context, obj T) error {
	r.DefaultFunc(obj)
	if r.CreateDefaultFunc == nil {
		return nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("the admission request is missing: %w", err))
	}
	if req.Operation == admissionv1.Create {
		r.CreateDefaultFunc(obj)
	}
	return nil
}

// ValidateCreate implements admission.Validator. The access check runs only on an object that
// is otherwise valid: a refused object costs the API server no review.
func (r Rules[T]) ValidateCreate(ctx context.Context, obj T) (admission.Warnings, error) {
	errs, err := r.withAccess(ctx, obj, r.CreateFunc(obj), r.AccessFunc != nil)
	if err != nil {
		return nil, err
	}
	return r.warnings(obj), r.invalid(obj, errs)
}

// ValidateUpdate implements admission.Validator.
func (r Rules[T]) ValidateUpdate(ctx context.Context, old, obj T) (admission.Warnings, error) {
	errs, err := r.withAccess(ctx, obj, r.UpdateFunc(old, obj), r.AccessFunc != nil && r.AccessOnUpdate)
	if err != nil {
		return nil, err
	}
	return r.warnings(obj), r.invalid(obj, errs)
}

// withAccess returns errs, or when there are none and check is set, AccessFunc's refusals of
// the request in ctx; an answer it could not get is an internal error.
func (r Rules[T]) withAccess(ctx context.Context, obj T, errs field.ErrorList, check bool) (field.ErrorList, error) {
	if len(errs) > 0 || !check {
		return errs, nil
	}
	req, err := admission.RequestFromContext(ctx)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("the admission request is missing: %w", err))
	}
	if errs, err = r.AccessFunc(ctx, req, obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return errs, nil
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
		WithLogConstructor(r.logger).
		Complete()
}

// logger is the request's logger, with controller-runtime's pairs added only when it writes a
// line (package lazylog): built for every request, it almost never writes one.
func (r Rules[T]) logger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil {
		return lazylog.WithValues(base, "webhookKind", r.Kind.Kind)
	}
	return lazylog.WithValues(base, "webhookKind", r.Kind.Kind, r.Kind.Kind, klog.KRef(req.Namespace, req.Name),
		"namespace", req.Namespace, "name", req.Name, "resource", req.Resource,
		"user", req.UserInfo.Username, "requestID", req.UID)
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
