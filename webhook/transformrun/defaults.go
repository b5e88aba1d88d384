// Package transformrun holds the admission rules of TransformRuns: defaulting and validation as
// plain functions over the API types, and the thin controller-runtime adapter that serves them.
package transformrun

import (
	"strings"

	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// Default fills every field the design defaults. It is idempotent.
func Default(r *v1alpha1.TransformRun) {
	DefaultSpec(&r.Spec)
}

// DefaultSpec defaults a TransformRun spec; validation judges the defaulted spec, so a run is
// judged the same before and after defaulting.
func DefaultSpec(spec *v1alpha1.TransformRunSpec) {
	if spec.WorkersPerNode == nil {
		spec.WorkersPerNode = ptr.To[int32](v1alpha1.DefaultRunWorkersPerNode)
	}
	spec.Source.Prefix = trimDir(spec.Source.Prefix)
	spec.Destination.Prefix = trimDir(spec.Destination.Prefix)
}

// trimDir drops the trailing slashes users write after a directory ("raw/"), but leaves a name
// of slashes only alone, so that validation refuses the root rather than a missing prefix.
func trimDir(dir string) string {
	if trimmed := strings.TrimRight(dir, "/"); trimmed != "" {
		return trimmed
	}
	return dir
}
