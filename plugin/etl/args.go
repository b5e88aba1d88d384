package etl

import (
	"context"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// argsReachAny refuses --args that no stage of a pipeline would hand to its function (ArgsReach),
// rather than let every object go through with the args silently dropped. One stage that takes
// them is enough: the args are meant for it.
func argsReachAny(ts []*v1alpha1.Transform) error {
	var first error
	for _, t := range ts {
		err := ArgsReach(t)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// checkArgsReach reads the stages of pipeline and applies argsReachAny when args are given. A
// stage it cannot read is left to the command itself, which reports it (or, for a run, the
// controller does).
func checkArgsReach(ctx context.Context, env *cli.Env, pipeline, args string) error {
	if args == "" {
		return nil
	}
	if ts, ok := readStages(ctx, env, pipeline); ok {
		return argsReachAny(ts)
	}
	return nil
}

// readStages reads every stage of pipeline, or says it could not.
func readStages(ctx context.Context, env *cli.Env, pipeline string) ([]*v1alpha1.Transform, bool) {
	var ts []*v1alpha1.Transform
	for _, name := range wire.SplitPipeline(pipeline) {
		t, err := getTransform(ctx, env, name)
		if err != nil {
			return nil, false
		}
		ts = append(ts, t)
	}
	return ts, true
}
