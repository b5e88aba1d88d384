package etl

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// namedOptions are the names a command acts on, or --all of the namespace.
type namedOptions struct {
	env   *cli.Env
	cmd   *cobra.Command
	all   bool
	names []string
	// ignoreNotFound skips a named Transform that does not exist, as kubectl delete does.
	ignoreNotFound bool
	// act is done to each Transform.
	act func(context.Context, client.Client, *v1alpha1.Transform) error
}

func (o *namedOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}

func (o *namedOptions) Validate() error {
	switch {
	case o.all && len(o.names) > 0:
		return cli.UsageError(o.cmd, "name Transforms or pass --all, not both")
	case !o.all && len(o.names) == 0:
		return cli.UsageError(o.cmd, "name at least one Transform, or pass --all")
	}
	return nil
}

// Run acts on every Transform named, or all of the namespace, going on past failures so that one
// missing name does not leave the others undone; the failures are joined.
func (o *namedOptions) Run(ctx context.Context) error {
	c, err := o.env.Clients.Client()
	if err != nil {
		return err
	}
	ns, _, err := o.env.Clients.Namespace()
	if err != nil {
		return err
	}
	var targets []*v1alpha1.Transform
	if o.all {
		var list v1alpha1.TransformList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range list.Items {
			targets = append(targets, &list.Items[i])
		}
		if len(targets) == 0 {
			fmt.Fprintf(o.env.ErrOut, "No transforms found in namespace %s.\n", ns)
		}
	} else {
		for _, name := range o.names {
			t := &v1alpha1.Transform{}
			t.Name, t.Namespace = name, ns
			targets = append(targets, t)
		}
	}
	var errs []error
	for _, t := range targets {
		if err := o.act(ctx, c, t); !o.ignoreNotFound || !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func newNamedCommand(env *cli.Env, cmd *cobra.Command, act func(context.Context, client.Client, *v1alpha1.Transform) error) (*cobra.Command, *namedOptions) {
	o := &namedOptions{env: env, act: act}
	cmd.ValidArgsFunction = completeTransforms(env)
	cmd.RunE = cli.RunE(o)
	cmd.Flags().BoolVar(&o.all, "all", false, "Act on every Transform of the namespace.")
	cmd.Flags().BoolVar(&o.ignoreNotFound, "ignore-not-found", false, "Treat a Transform that does not exist as done.")
	return cmd, o
}

// newSuspendCommand is suspend (true) or resume, kubectl's words for what AIStore calls stop and
// start, which stay as aliases: both set spec.stopped, which the controller answers by deleting
// the transformer pods, or creating them again; the Transform stays. What is printed follows the
// word typed, so scripts reading "stopped" keep working.
func newSuspendCommand(env *cli.Env, suspend bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "resume NAME...|--all",
		Aliases: []string{"start"},
		Short:   "Resume suspended Transforms: their transformer pods are created again (spec.stopped=false)",
		Example: `  # Run md5's transformers again
  kubectl etl resume md5`,
	}
	did := map[string]string{"resume": "resumed", "start": "started"}
	if suspend {
		cmd = cli.MarkDestructive(&cobra.Command{
			Use:     "suspend NAME...|--all",
			Aliases: []string{"stop"},
			Short:   "Suspend Transforms: delete their transformer pods, keep the Transforms (spec.stopped=true)",
			Example: `  # Delete md5's transformer pods but keep the Transform
  kubectl etl suspend md5

  # Suspend every Transform of the namespace
  kubectl etl suspend --all`,
		})
		did = map[string]string{"suspend": "suspended", "stop": "stopped"}
	}
	var o *namedOptions
	cmd, o = newNamedCommand(env, cmd, func(ctx context.Context, c client.Client, t *v1alpha1.Transform) error {
		patch := fmt.Appendf(nil, `{"spec":{"stopped":%t}}`, suspend)
		if err := c.Patch(ctx, t, client.RawPatch(client.Merge.Type(), patch)); err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "transform.etl.mlkube.io/%s %s\n", t.Name, did[o.cmd.CalledAs()])
		return nil
	})
	return cmd
}

func newRmCommand(env *cli.Env, dp dataPath) *cobra.Command {
	cmd := cli.MarkDestructive(&cobra.Command{
		Use:     "rm NAME...|--all|etl:OBJECT...",
		Aliases: []string{"delete"},
		Short:   "Delete Transforms and their transformer pods, or objects (etl:NAME)",
		Long: `Delete Transforms and their transformer pods. Arguments written etl:NAME are objects of the
namespace instead: etl:OBJECT removes one, etl:PREFIX/ with --recursive every object under the
prefix; that needs the ClusterRole mlkube-datapath-user bound in the namespace to
--service-account.`,
		Example: `  # Delete md5
  kubectl etl rm md5

  # Delete every Transform of the namespace
  kubectl etl rm --all -n team-a

  # Remove one object, and every object under out/
  kubectl etl rm etl:raw/a.txt
  kubectl etl rm --recursive etl:out/`,
	})
	cmd, _ = newNamedCommand(env, cmd, func(ctx context.Context, c client.Client, t *v1alpha1.Transform) error {
		if err := c.Delete(ctx, t); err != nil {
			return err
		}
		fmt.Fprintf(env.Out, "transform.etl.mlkube.io %q deleted\n", t.Name)
		return nil
	})
	addObjectRemoval(cmd, env, dp)
	return cmd
}
