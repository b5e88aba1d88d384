package transformrun

import (
	"bytes"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/fieldcheck"
)

// maxObjectErrors bounds the errors reported for spec.source.objects: a list of a hundred
// thousand bad names must not become an answer of a hundred thousand errors.
const maxObjectErrors = 10

var (
	sourcePath = specPath.Child("source")
	dstPath    = specPath.Child("destination")
)

// validateSource checks the source and the destination together, as the destination must stay
// clear of the source: results inside it would be read as input.
func validateSource(src v1alpha1.RunSource, dst v1alpha1.RunDestination) field.ErrorList {
	errs := fieldcheck.DataDir(dstPath.Child("prefix"), dst.Prefix)
	// Results can be read as input only within one tier: the node tier, or one ObjectStore.
	dstOK := len(errs) == 0 && src.Store == dst.Store
	if src.Store != "" {
		errs = append(errs, fieldcheck.ObjectName(sourcePath.Child("store"), src.Store, "ObjectStore")...)
	}
	if dst.Store != "" {
		errs = append(errs, fieldcheck.ObjectName(dstPath.Child("store"), dst.Store, "ObjectStore")...)
	}
	var set []string
	if src.Prefix != "" {
		set = append(set, "prefix")
		dirErrs := fieldcheck.DataDir(sourcePath.Child("prefix"), src.Prefix)
		errs = append(errs, dirErrs...)
		if dstOK && len(dirErrs) == 0 && overlaps(src.Prefix, dst.Prefix) {
			errs = append(errs, field.Invalid(dstPath.Child("prefix"), dst.Prefix, fmt.Sprintf(
				"overlaps the source prefix %q: results would be read as input; choose a destination outside the source", src.Prefix)))
		}
	}
	if len(src.Objects) > 0 {
		set = append(set, "objects")
		errs = append(errs, validateObjects(sourcePath.Child("objects"), src.Objects, dst.Prefix, dstOK)...)
	}
	if src.Template != "" {
		set = append(set, "template")
		errs = append(errs, validateTemplate(sourcePath.Child("template"), src.Template, dst.Prefix, dstOK)...)
	}
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(sourcePath, "name the objects with exactly one of spec.source.prefix (a directory), spec.source.objects (a list) or spec.source.template (e.g. shard-{0000..0999}.tar)"))
	case 1:
	default:
		for _, f := range set[1:] {
			errs = append(errs, field.Forbidden(sourcePath.Child(f), fmt.Sprintf(
				"only one of spec.source.prefix, spec.source.objects and spec.source.template may be set, and spec.source.%s is set too; remove one", set[0])))
		}
	}
	errs = append(errs, validateExtension(sourcePath.Child("extension"), src.Extension)...)
	errs = append(errs, validateExtension(dstPath.Child("toExtension"), dst.ToExtension)...)
	if dst.ToExtension != "" && src.Extension == "" {
		errs = append(errs, field.Forbidden(dstPath.Child("toExtension"),
			"replaces spec.source.extension in the results' names; set spec.source.extension too, e.g. .flac to .wav"))
	}
	return errs
}

// overlaps reports whether either directory is, or lies inside, the other.
func overlaps(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// validateObjects checks every object of a list source: a valid name, outside the destination,
// and at most v1alpha1.MaxRunObjects of them.
func validateObjects(p *field.Path, objects []string, dst string, dstOK bool) field.ErrorList {
	if len(objects) > v1alpha1.MaxRunObjects {
		return field.ErrorList{field.Invalid(p, fmt.Sprintf("%d objects", len(objects)), fmt.Sprintf(
			"at most %d objects are allowed; split the run into several TransformRuns, or name them with a prefix", v1alpha1.MaxRunObjects))}
	}
	var errs field.ErrorList
	for i, o := range objects {
		if len(errs) == maxObjectErrors {
			return append(errs, field.Invalid(p, field.OmitValueType{}, "further objects are not checked; correct the ones above first"))
		}
		if err := wire.CheckObject(o); err != nil {
			errs = append(errs, field.Invalid(p.Index(i), field.OmitValueType{}, err.Error()))
		} else if dstOK && strings.HasPrefix(o, dst+"/") {
			errs = append(errs, field.Invalid(p.Index(i), o, inDestination(dst)))
		}
	}
	return errs
}

// validateTemplate checks that a template expands to at most v1alpha1.MaxRunObjects valid names
// of v1alpha1.MaxRunTemplateBytes together, none inside the destination. It never holds the
// expansion: the bounds are computed from the template's parts and the names checked one by one,
// so a create or a dry run costs memory of the order of the template.
func validateTemplate(p *field.Path, template, dst string, dstOK bool) field.ErrorList {
	tmpl, err := wire.ParseTemplate(template, wire.RunLimits)
	if err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error())}
	}
	if !dstOK {
		return nil
	}
	inDst := []byte(dst + "/")
	for n := range tmpl.Names() {
		if bytes.HasPrefix(n, inDst) {
			return field.ErrorList{field.Invalid(p, template, fmt.Sprintf("names %q: %s", n, inDestination(dst)))}
		}
	}
	return nil
}

func inDestination(dst string) string {
	return fmt.Sprintf("lies inside the destination %q, where results could overwrite it; choose a destination that holds no source object", dst)
}

// validateExtension checks an extension: ".wav", a suffix of a name's last element.
func validateExtension(p *field.Path, ext string) field.ErrorList {
	if ext == "" {
		return nil
	}
	if len(ext) < 2 || ext[0] != '.' || strings.ContainsAny(ext, "/\x00") {
		return field.ErrorList{field.Invalid(p, ext, "must be an extension such as .wav: a dot, then at least one character, and no /")}
	}
	return nil
}
