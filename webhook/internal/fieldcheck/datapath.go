package fieldcheck

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/wire"
)

// Pipeline checks a Transform's name, or a pipeline "a>>b" of at most wire.MaxPipelineStages of
// them, as the agent resolves it. owner names the object whose namespace holds the Transforms
// ("run", "job"); tooLong is the remedy for a pipeline of too many stages.
func Pipeline(p *field.Path, transform, owner, tooLong string) field.ErrorList {
	stages := wire.SplitPipeline(transform)
	if len(stages) > wire.MaxPipelineStages {
		return field.ErrorList{field.Invalid(p, transform, fmt.Sprintf(
			"a pipeline has at most %d stages, as each holds a transformer connection per object in flight; %s", wire.MaxPipelineStages, tooLong))}
	}
	var errs field.ErrorList
	for i, stage := range stages {
		for _, msg := range validation.IsDNS1123Subdomain(stage) {
			errs = append(errs, field.Invalid(p, transform, fmt.Sprintf(
				"stage %d, %q, must name a Transform of the %s's namespace (stages are joined by %q): %s", i+1, stage, owner, wire.PipelineSeparator, msg)))
		}
	}
	return errs
}

// DataDir checks a prefix: a directory of the namespace's data, spelled cleanly, and not the
// data's root.
func DataDir(p *field.Path, dir string) field.ErrorList {
	switch {
	case dir == "":
		return field.ErrorList{field.Required(p, "name a directory of the namespace's data, e.g. out")}
	case dir == "." || strings.Trim(dir, "/") == "":
		return field.ErrorList{field.Invalid(p, dir, "must name a directory of the namespace's data, not its root")}
	}
	if err := wire.CheckObject(dir); err != nil {
		return field.ErrorList{field.Invalid(p, field.OmitValueType{}, err.Error()+"; name a directory inside the namespace's data")}
	}
	if clean := path.Clean(dir); clean != dir {
		return field.ErrorList{field.Invalid(p, dir, fmt.Sprintf("write it as %q", clean))}
	}
	return nil
}
