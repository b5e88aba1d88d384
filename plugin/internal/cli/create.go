package cli

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CreateEach creates objs in order, as kubectl create does under --dry-run: "none" stores them,
// "server" has the API server admit them without storing, "client" sends nothing. report runs
// after each object (what was done, or the object under -o); fail turns a refused create into
// the command's error, naming the object.
func CreateEach[T client.Object](ctx context.Context, env *Env, dryRun string, objs []T, fail func(T, error) error, report func(T) error) error {
	var c client.Client
	if dryRun != "client" {
		var err error
		if c, err = env.Clients.Client(); err != nil {
			return err
		}
	}
	var opts []client.CreateOption
	if dryRun == "server" {
		opts = append(opts, client.DryRunAll)
	}
	for _, obj := range objs {
		if c != nil {
			if err := c.Create(ctx, obj, opts...); err != nil {
				return fail(obj, err)
			}
		}
		if err := report(obj); err != nil {
			return err
		}
	}
	return nil
}

// ReportCreated prints obj in the format of -o, else line ("mxjob.mxnet.mlkube.io/a created"),
// as kubectl create does after each object.
func ReportCreated(env *Env, print *PrintFlags, obj runtime.Object, line string) error {
	if print.Output() == "" {
		_, err := fmt.Fprintln(env.Out, line)
		return err
	}
	p, err := print.ObjectPrinter(env.Scheme)
	if err != nil {
		return err
	}
	return PrintObject(p, obj, env.Scheme, env.Out)
}
