package etl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// inspectOptions serve the commands that print a table about one Transform (details, errors,
// health, metrics); with -o they print the objects the table was drawn from.
type inspectOptions struct {
	env   *cli.Env
	print *cli.PrintFlags
	name  string
	// view draws the table and returns the objects behind it; a failure it returns is reported
	// after the table is printed (health's unhealthy nodes).
	view func(ctx context.Context, t *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error)
	// empty is said on stderr instead of an empty table, with the Transform's name.
	empty string
}

func newInspectCommand(env *cli.Env, cmd *cobra.Command, empty string,
	view func(context.Context, *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error)) *cobra.Command {
	o := &inspectOptions{env: env, print: cli.NewPrintFlags(true), view: view, empty: empty}
	cmd.Args = cli.ExactArgs("NAME")
	cmd.ValidArgsFunction = completeFirstTransform(env)
	cmd.RunE = cli.RunE(o)
	o.print.AddFlags(cmd)
	return cmd
}

func (o *inspectOptions) Complete(_ *cobra.Command, args []string) error {
	o.name = args[0]
	return nil
}

func (o *inspectOptions) Validate() error { return o.print.Validate() }

func (o *inspectOptions) Run(ctx context.Context) error {
	t, err := getTransform(ctx, o.env, o.name)
	if err != nil {
		return err
	}
	tbl, objs, failure := o.view(ctx, t)
	if tbl == nil {
		return failure
	}
	switch {
	case !o.print.IsTable():
		err = o.printObjects(objs)
	case len(tbl.Rows) == 0:
		fmt.Fprintf(o.env.ErrOut, o.empty+"\n", o.name)
	default:
		err = o.print.TablePrinter(false).PrintObj(tbl, o.env.Out)
	}
	if err != nil {
		return err
	}
	return failure
}

// printObjects prints one object as itself and several as a v1 List, as kubectl get does.
func (o *inspectOptions) printObjects(objs []runtime.Object) error {
	p, err := o.print.ObjectPrinter(o.env.Scheme)
	if err != nil {
		return err
	}
	if len(objs) == 1 {
		return cli.PrintObject(p, objs[0], o.env.Scheme, o.env.Out)
	}
	list, err := cli.AsList(objs, o.env.Scheme)
	if err != nil {
		return err
	}
	return p.PrintObj(list, o.env.Out)
}

func newDetailsCommand(env *cli.Env) *cobra.Command {
	return newInspectCommand(env, &cobra.Command{
		Use:   "details NAME",
		Short: "Show a Transform's transformer on each node: pod, readiness, restarts and counters",
		Example: `  # Per-node state and counters of md5
  kubectl etl details md5

  # With each transformer's address
  kubectl etl details md5 -o wide

  # The whole Transform, status included
  kubectl etl details md5 -o yaml`,
	}, "Transform %s runs on no node.", func(_ context.Context, t *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error) {
		return NodeTable(t), []runtime.Object{t}, nil
	})
}

func newErrorsCommand(env *cli.Env) *cobra.Command {
	return newInspectCommand(env, &cobra.Command{
		Use:   "errors NAME",
		Short: "List a Transform's most recent failed objects, oldest first",
		Long: fmt.Sprintf(`List the most recent objects a Transform failed to transform (status keeps the last %d), with
the node, the transformer's status code and its message.`, v1alpha1.MaxObjectErrors),
		Example: `  # Recent failures of md5
  kubectl etl errors md5`,
	}, "No failed objects recorded for Transform %s.", func(_ context.Context, t *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error) {
		return ErrorTable(t, t.Status.Errors, env.Clock.Now()), []runtime.Object{t}, nil
	})
}

func newHealthCommand(env *cli.Env) *cobra.Command {
	return newInspectCommand(env, &cobra.Command{
		Use:   "health NAME",
		Short: "Say whether a Transform's transformer is ready on every node: exit 0 yes, 1 no, 3 when not found",
		Example: `  # Per-node health of md5; the exit code says whether every node is healthy
  kubectl etl health md5 && echo ready`,
	}, "", func(_ context.Context, t *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error) {
		tbl, unhealthy := HealthTable(t)
		if len(tbl.Rows) == 0 {
			return nil, nil, fmt.Errorf("transform %s runs on no node (stage %s)", t.Name, stage(t))
		}
		var failure error
		if unhealthy > 0 {
			failure = fmt.Errorf("transform %s is not healthy on %d of %d nodes; see kubectl etl logs %s", t.Name, unhealthy, len(tbl.Rows), t.Name)
		}
		return tbl, []runtime.Object{t}, failure
	})
}
