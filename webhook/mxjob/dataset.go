package mxjob

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

var datasetPath = specPath.Child("dataset")

// validateDataset checks spec.dataset by the rules the data path applies to a TransformRun's
// source: a clean directory or a template of valid names, and a Transform or a pipeline of them.
func validateDataset(spec *v1beta1.MxJobSpec) field.ErrorList {
	ds := spec.Dataset
	if ds == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case ds.Prefix != "" && strings.TrimRight(ds.Prefix, "/") == "":
		errs = append(errs, field.Invalid(datasetPath.Child("prefix"), ds.Prefix, "must name a directory of the namespace's data, not its root"))
	case ds.Prefix == "" && ds.Template == "":
		errs = append(errs, field.Required(datasetPath, "name the objects with exactly one of spec.dataset.prefix (a directory, e.g. train) or spec.dataset.template (e.g. shard-{0000..0999}.tar)"))
	case ds.Prefix != "" && ds.Template != "":
		errs = append(errs, field.Forbidden(datasetPath.Child("template"),
			"only one of spec.dataset.prefix and spec.dataset.template may be set, and spec.dataset.prefix is set too; remove one"))
	case ds.Prefix != "":
		// Judged as defaulting leaves it, without trailing slashes.
		errs = append(errs, fieldcheck.DataDir(datasetPath.Child("prefix"), strings.TrimRight(ds.Prefix, "/"))...)
	default:
		if _, err := wire.ParseTemplate(ds.Template, wire.RunLimits); err != nil {
			errs = append(errs, field.Invalid(datasetPath.Child("template"), field.OmitValueType{}, err.Error()))
		}
	}
	if ds.Transform != "" {
		errs = append(errs, fieldcheck.Pipeline(datasetPath.Child("transform"), ds.Transform, "job",
			"transform the dataset with a TransformRun first and read its results")...)
	}
	if ds.Args != "" && ds.Transform == "" {
		errs = append(errs, field.Forbidden(datasetPath.Child("args"), "args reach a Transform; set spec.dataset.transform too, or remove args"))
	}
	if len(ds.Args) > wire.MaxArgs {
		errs = append(errs, field.Invalid(datasetPath.Child("args"), fmt.Sprintf("%d bytes", len(ds.Args)), fmt.Sprintf(
			"must be at most %d bytes, as args reach the transformer with every object; pass larger parameters in an object", wire.MaxArgs)))
	}
	return append(errs, validateTokenVolume(spec)...)
}

// validateTokenVolume refuses a worker template that already uses the volume name or the mount
// path the controller gives the workers' data path token: the pod would be refused, or the token
// hidden, only once the controller creates it, far from the field to correct.
func validateTokenVolume(spec *v1beta1.MxJobSpec) field.ErrorList {
	var errs field.ErrorList
	for i, rs := range spec.ReplicaSpecs {
		if typeOrDefault(rs.MxReplicaType) != v1beta1.ReplicaTypeWorker || rs.Template == nil {
			continue
		}
		tp := replicasPath.Index(i).Child("template", "spec")
		for j, v := range rs.Template.Spec.Volumes {
			if v.Name == v1beta1.DatasetTokenVolume {
				errs = append(errs, field.Invalid(tp.Child("volumes").Index(j).Child("name"), v.Name,
					"is the volume the controller adds for the data path token of a job with spec.dataset; rename this volume"))
			}
		}
		for c, ctr := range rs.Template.Spec.Containers {
			for m, vm := range ctr.VolumeMounts {
				if path.Clean(vm.MountPath) == wire.TokenDir {
					errs = append(errs, field.Invalid(tp.Child("containers").Index(c).Child("volumeMounts").Index(m).Child("mountPath"), vm.MountPath,
						"is where the controller mounts the data path token of a job with spec.dataset; mount this volume elsewhere"))
				}
			}
		}
	}
	return errs
}
