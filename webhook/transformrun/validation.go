package transformrun

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

var specPath = field.NewPath("spec")

// ValidateCreate returns every problem of a new TransformRun. Unset optional fields count as
// their defaults, so a run is judged the same before and after defaulting.
func ValidateCreate(r *v1alpha1.TransformRun) field.ErrorList {
	spec := r.Spec.DeepCopy()
	DefaultSpec(spec)
	var errs field.ErrorList
	if spec.Transform != "" {
		errs = fieldcheck.Pipeline(specPath.Child("transform"), spec.Transform, "run", "split it into several runs")
	} else if spec.Args != "" {
		errs = append(errs, field.Forbidden(specPath.Child("args"), "a run without spec.transform is a copy, with no transformer to pass args to; name a Transform, or remove args"))
	}
	if len(spec.Args) > wire.MaxArgs {
		errs = append(errs, field.Invalid(specPath.Child("args"), fmt.Sprintf("%d bytes", len(spec.Args)), fmt.Sprintf(
			"must be at most %d bytes, as args reach the transformer with every object; pass larger parameters in an object", wire.MaxArgs)))
	}
	errs = append(errs, validateSource(spec.Source, spec.Destination)...)
	if spec.Check && spec.DryRun {
		errs = append(errs, field.Invalid(specPath.Child("check"), true,
			"set at most one of dryRun and check: dryRun counts the objects without transforming them, check transforms each and discards the result"))
	}
	if w := *spec.WorkersPerNode; w < 1 || w > v1alpha1.MaxRunWorkersPerNode {
		errs = append(errs, field.Invalid(specPath.Child("workersPerNode"), w, fmt.Sprintf(
			"must be between 1 and %d, mlkube's limit of workers per node; leave it unset for %d", v1alpha1.MaxRunWorkersPerNode, v1alpha1.DefaultRunWorkersPerNode)))
	}
	ttl := specPath.Child("ttlSecondsAfterFinished")
	errs = append(errs, fieldcheck.NonNegative(ttl, spec.TTLSecondsAfterFinished)...)
	errs = append(errs, fieldcheck.AtMost(ttl, spec.TTLSecondsAfterFinished, v1alpha1.MaxRunTTLSeconds)...)
	errs = append(errs, fieldcheck.MaxItems(specPath.Child("nodeSelector"), len(spec.NodeSelector), v1alpha1.MaxNodeSelector)...)
	return append(errs, fieldcheck.NodeSelector(specPath.Child("nodeSelector"), spec.NodeSelector)...)
}

// ValidateUpdate returns every problem of an update: only spec.suspend may change. The rest of the
// spec is not judged again, so a run admitted once can always be suspended, labelled or have its
// finalizers removed, even under rules tightened since.
func ValidateUpdate(old, r *v1alpha1.TransformRun) field.ErrorList {
	if r.DeletionTimestamp != nil {
		return nil // let finalizers be removed whatever the spec holds
	}
	return validateImmutable(&old.Spec, &r.Spec)
}

// validateImmutable refuses any change of the spec but suspend, on the field that changed: the
// nodes' journals, counts and results belong to the spec the run started with. Defaults are
// applied to both sides first, so what defaulting adds never counts as a change. It walks the
// spec's fields rather than naming them, so a field added later is immutable too.
func validateImmutable(oldSpec, newSpec *v1alpha1.TransformRunSpec) field.ErrorList {
	o, n := oldSpec.DeepCopy(), newSpec.DeepCopy()
	DefaultSpec(o)
	DefaultSpec(n)
	n.Suspend = o.Suspend
	return changedFields(specPath, reflect.ValueOf(*o), reflect.ValueOf(*n))
}

// changedFields returns an immutability error for each field of the structs a and b that differs,
// descending into nested structs so the error names the innermost field.
func changedFields(p *field.Path, a, b reflect.Value) field.ErrorList {
	const msg = "immutable once created; create a new TransformRun (suspend is the only field that may change)"
	var errs field.ErrorList
	for i := range a.NumField() {
		name, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("json"), ",")
		fa, fb := a.Field(i), b.Field(i)
		switch {
		case equality.Semantic.DeepEqual(fa.Interface(), fb.Interface()):
		case fa.Kind() == reflect.Struct:
			errs = append(errs, changedFields(p.Child(name), fa, fb)...)
		default:
			errs = append(errs, field.Forbidden(p.Child(name), msg))
		}
	}
	return errs
}
