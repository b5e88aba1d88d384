package mxjob

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
)

// datasetScheme marks a name of the namespace's data, as kubectl etl spells it.
const datasetScheme = "etl:"

// datasetFlags are submit's flags of spec.dataset.
type datasetFlags struct {
	dataset, transform, args, serviceAccount string
}

// parseDataset turns --dataset, --transform and --transform-args into spec.dataset: etl:DIR/
// (or etl:DIR) is a prefix, a name with a brace range is a template. It returns nil without
// --dataset. Errors name the flag, as the webhook's would name the field.
func parseDataset(f datasetFlags) (*v1beta1.Dataset, error) {
	if f.dataset == "" {
		for _, set := range []struct{ flag, value string }{{"--transform", f.transform}, {"--transform-args", f.args}, {"--service-account", f.serviceAccount}} {
			if set.value != "" {
				return nil, fmt.Errorf("%s applies to the workers' reads of --dataset; add --dataset etl:DIR/", set.flag)
			}
		}
		return nil, nil
	}
	name, ok := strings.CutPrefix(f.dataset, datasetScheme)
	if !ok || name == "" {
		return nil, fmt.Errorf("--dataset %q must name objects of the namespace's data: etl:DIR/ (a directory) or etl:TEMPLATE (e.g. etl:shard-{000..999}.tar)", f.dataset)
	}
	ds := &v1beta1.Dataset{Transform: f.transform, Args: f.args}
	if strings.Contains(name, "{") {
		if _, err := wire.ParseTemplate(name, wire.RunLimits); err != nil {
			return nil, fmt.Errorf("--dataset: %w", err)
		}
		ds.Template = name
	} else {
		dir := strings.TrimSuffix(name, "/")
		if err := wire.CheckObject(dir); err != nil || dir == "" {
			return nil, fmt.Errorf("--dataset %q must name a directory inside the namespace's data, e.g. etl:train/", f.dataset)
		}
		ds.Prefix = dir
	}
	if err := checkTransform(f.transform); err != nil {
		return nil, err
	}
	if f.args != "" && f.transform == "" {
		return nil, fmt.Errorf("--transform-args reach a Transform; add --transform")
	}
	if msgs := validation.IsDNS1123Subdomain(f.serviceAccount); f.serviceAccount != "" && len(msgs) > 0 {
		return nil, fmt.Errorf("--service-account %q is not a ServiceAccount's name: %s", f.serviceAccount, msgs[0])
	}
	if len(f.args) > wire.MaxArgs {
		return nil, fmt.Errorf("--transform-args must be at most %d bytes; pass larger parameters in an object", wire.MaxArgs)
	}
	return ds, nil
}

// checkTransform checks --transform: a Transform's name or a pipeline "a>>b", as the webhook does.
func checkTransform(transform string) error {
	if transform == "" {
		return nil
	}
	stages := wire.SplitPipeline(transform)
	if len(stages) > wire.MaxPipelineStages {
		return fmt.Errorf("--transform %q has more than %d stages; transform the dataset with a TransformRun first", transform, wire.MaxPipelineStages)
	}
	for i, stage := range stages {
		if msgs := validation.IsDNS1123Subdomain(stage); len(msgs) > 0 {
			return fmt.Errorf("--transform %q: stage %d, %q, is not a Transform's name: %s", transform, i+1, stage, msgs[0])
		}
	}
	return nil
}

// datasetString spells spec.dataset as submit's flags do: "etl:train/ through decode (args
// size=224)".
func datasetString(ds *v1beta1.Dataset) string {
	s := datasetScheme + ds.Template
	if ds.Prefix != "" {
		s = datasetScheme + ds.Prefix + "/"
	}
	if ds.Transform != "" {
		s += " through " + ds.Transform
	}
	if ds.Args != "" {
		s += fmt.Sprintf(" (args %q)", ds.Args)
	}
	return s
}
