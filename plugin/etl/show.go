package etl

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// aisShow are AIStore's `ais etl show WHAT NAME` forms, and the command that answers each here:
// without this, `get errors md5` would look up Transforms named "errors" and "md5".
var aisShow = map[string]string{"errors": "errors", "details": "describe"}

type getOptions struct {
	lister cli.Lister[*v1alpha1.Transform]
	cmd    *cobra.Command
	names  []string
}

func newGetCommand(env *cli.Env) *cobra.Command {
	o := &getOptions{lister: cli.Lister[*v1alpha1.Transform]{Env: env, Flags: cli.NewListFlags(), Resource: transforms}}
	cmd := &cobra.Command{
		Use:     "get [NAME...]",
		Aliases: []string{"list", "show"},
		Short:   "List Transforms with their stage, nodes ready, objects, bytes in and out, and errors",
		Example: `  # Transforms of the current namespace
  kubectl etl get

  # One Transform, with its form and argument
  kubectl etl get md5 -o wide

  # Every namespace's, following changes
  kubectl etl list -A -w`,
		ValidArgsFunction: completeTransforms(env),
		RunE:              cli.RunE(o),
	}
	o.lister.Flags.AddFlags(cmd)
	return cmd
}

func (o *getOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}

func (o *getOptions) Validate() error {
	if len(o.names) > 1 {
		if verb, ok := aisShow[o.names[0]]; ok {
			return cli.UsageError(o.cmd, "%q is not a Transform here: AIStore's 'show %s NAME' is 'kubectl etl %s NAME'", o.names[0], o.names[0], verb)
		}
	}
	return o.lister.Flags.ValidateNames(o.cmd, o.names)
}

func (o *getOptions) Run(ctx context.Context) error { return o.lister.Run(ctx, o.names) }
