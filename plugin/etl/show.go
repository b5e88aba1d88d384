package etl

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type showOptions struct {
	lister cli.Lister[*v1alpha1.Transform]
	cmd    *cobra.Command
	names  []string
}

func newShowCommand(env *cli.Env) *cobra.Command {
	o := &showOptions{lister: cli.Lister[*v1alpha1.Transform]{Env: env, Flags: cli.NewListFlags(), Resource: transforms}}
	cmd := &cobra.Command{
		Use:     "show [NAME...]",
		Aliases: []string{"list"},
		Short:   "List Transforms with their stage, nodes ready, objects, bytes in and out, and errors",
		Example: `  # Transforms of the current namespace
  kubectl etl show

  # One Transform, with its form and argument
  kubectl etl show md5 -o wide

  # Every namespace's, following changes
  kubectl etl list -A -w`,
		ValidArgsFunction: completeTransforms(env),
		RunE:              cli.RunE(o),
	}
	o.lister.Flags.AddFlags(cmd)
	return cmd
}

func (o *showOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.names = cmd, args
	return nil
}

func (o *showOptions) Validate() error { return o.lister.Flags.Validate(o.cmd) }

func (o *showOptions) Run(ctx context.Context) error { return o.lister.Run(ctx, o.names) }
