package etl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// newNamedCommand makes cmd act on the Transforms named, or --all of the namespace, each with
// act, which returns the line to print; --ignore-not-found skips a missing one.
func newNamedCommand(env *cli.Env, cmd *cobra.Command, act func(context.Context, client.Client, *v1alpha1.Transform) (string, error)) (*cobra.Command, *cli.Named[*v1alpha1.Transform]) {
	o := &cli.Named[*v1alpha1.Transform]{Env: env, Resource: transforms, Noun: "Transforms", Missing: "name at least one Transform, or pass --all", Act: act}
	o.Bind(cmd, "Act on every Transform of the namespace.")
	cmd.Flags().BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, "Treat a Transform that does not exist as done.")
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
	var o *cli.Named[*v1alpha1.Transform]
	cmd, o = newNamedCommand(env, cmd, func(ctx context.Context, c client.Client, t *v1alpha1.Transform) (string, error) {
		patch := fmt.Appendf(nil, `{"spec":{"stopped":%t}}`, suspend)
		if err := c.Patch(ctx, t, client.RawPatch(client.Merge.Type(), patch)); err != nil {
			return "", err
		}
		return fmt.Sprintf("transform.etl.mlkube.io/%s %s", t.Name, did[o.Cmd.CalledAs()]), nil
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
	cmd, _ = newNamedCommand(env, cmd, func(ctx context.Context, c client.Client, t *v1alpha1.Transform) (string, error) {
		return fmt.Sprintf("transform.etl.mlkube.io %q deleted", t.Name), c.Delete(ctx, t)
	})
	addObjectRemoval(cmd, env, dp)
	return cmd
}
