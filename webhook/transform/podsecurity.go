package transform

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/webhook/internal/podsecurity"
)

var templateSpecPath = specPath.Child("podTemplate", "spec")

// placeholderNode stands for the node in the pod judged: a pod differs from node to node only in
// its name, its node label and its affinity, none of which Pod Security looks at.
const placeholderNode = "node"

// validatePodSecurity judges the pod the controller would build from spec, with the defaults it
// fills, by the restricted Pod Security Standard, and names the template's fields that fail it.
// The pod is built with the development images: Pod Security does not look at images, and what
// mlkube adds is the same whichever run, fqn's csi data root included.
func validatePodSecurity(spec *v1alpha1.TransformSpec) field.ErrorList {
	tr := &v1alpha1.Transform{Spec: *spec.DeepCopy()}
	Default(tr)
	s := &tr.Spec
	forms := 0
	for _, set := range []bool{s.Runtime != nil, s.PodTemplate != nil, s.Code != nil} {
		if set {
			forms++
		}
	}
	if forms != 1 || (s.PodTemplate != nil && len(s.PodTemplate.Spec.Containers) != 1) {
		return nil // refused by validateForm; there is no pod to judge
	}
	pod := podspec.Build(tr, placeholderNode, wire.DefaultPodImages())
	errs := podsecurity.Restricted(templateSpecPath, &pod.ObjectMeta, &pod.Spec)
	var users field.ErrorList
	var ours []string
	for _, e := range errs {
		if s.PodTemplate == nil || addedByMlkube(e.Field, &s.PodTemplate.Spec, &pod.Spec) {
			ours = append(ours, e.Error())
			continue
		}
		users = append(users, e)
	}
	if len(ours) > 0 {
		users = append(users, field.InternalError(specPath, fmt.Errorf(
			"what mlkube adds to the transformer pod fails the restricted Pod Security Standard, which is a bug of mlkube; please report it: %s",
			strings.Join(ours, "; "))))
	}
	return users
}

// addedByMlkube reports whether the field of a refusal is one of the init containers or volumes
// mlkube appends to the template's: those come after the template's own.
func addedByMlkube(path string, tmpl, built *corev1.PodSpec) bool {
	for _, added := range []struct {
		name          string
		fromTemplate  int
		inTheBuiltPod int
	}{{"initContainers", len(tmpl.InitContainers), len(built.InitContainers)}, {"volumes", len(tmpl.Volumes), len(built.Volumes)}} {
		for i := added.fromTemplate; i < added.inTheBuiltPod; i++ {
			p := templateSpecPath.Child(added.name).Index(i).String()
			if path == p || strings.HasPrefix(path, p+".") {
				return true
			}
		}
	}
	return false
}

// validateReservedNames refuses in a template the names of what mlkube adds to the pod, and the
// data.mlkube.io driver: a template must not mount mlkube's volumes (mlkube-data would give it
// the namespace's data on the node), shadow the io shim or the variables mlkube sets.
func validateReservedNames(p *field.Path, spec *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	for j, v := range spec.Volumes {
		vp := p.Child("volumes").Index(j)
		if strings.HasPrefix(v.Name, podspec.ReservedPrefix) {
			errs = append(errs, field.Forbidden(vp.Child("name"), fmt.Sprintf(
				"volume names beginning with %q are mlkube's own (the fqn data root, the io shim); rename the volume", podspec.ReservedPrefix)))
		}
		if v.CSI != nil && v.CSI.Driver == podspec.DataDriver {
			errs = append(errs, field.Forbidden(vp.Child("csi", "driver"), fmt.Sprintf(
				"%s serves only the data root mlkube mounts into fqn transformers; use spec.argument: fqn to get it", podspec.DataDriver)))
		}
	}
	for _, list := range []struct {
		name       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			cp := p.Child(list.name).Index(i)
			if c.Name == podspec.IOShimInitName {
				errs = append(errs, field.Forbidden(cp.Child("name"), fmt.Sprintf(
					"%s is the io shim's init container, which mlkube adds; rename the container", podspec.IOShimInitName)))
			}
			for k, m := range c.VolumeMounts {
				if strings.HasPrefix(m.Name, podspec.ReservedPrefix) {
					errs = append(errs, field.Forbidden(cp.Child("volumeMounts").Index(k).Child("name"), fmt.Sprintf(
						"volumes named %q… are mlkube's own; mount a volume of the template (spec.argument: fqn gives the transformer its data read-only)", podspec.ReservedPrefix)))
				}
			}
			for k, e := range c.Env {
				if strings.HasPrefix(e.Name, podspec.ReservedEnvPrefix) {
					errs = append(errs, field.Forbidden(cp.Child("env").Index(k).Child("name"), fmt.Sprintf(
						"variables beginning with %s are set by mlkube (docs/transforms.md); rename the variable", podspec.ReservedEnvPrefix)))
				}
			}
		}
	}
	return errs
}
