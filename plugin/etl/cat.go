package etl

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

type catOptions struct {
	env            *cli.Env
	dataPath       dataPath
	cmd            *cobra.Command
	object         string
	transform      string
	args           string
	serviceAccount string
}

func newCatCommand(env *cli.Env, dp dataPath) *cobra.Command {
	o := &catOptions{env: env, dataPath: dp}
	cmd := &cobra.Command{
		Use:   "cat OBJECT",
		Short: "Print a stored object, or what a Transform makes of it",
		Long: `Print an object of the namespace (OBJECT or etl:OBJECT) to stdout. With --transform, the object
goes through a Transform, or a pipeline "a>>b", on the node that holds it: the agent of that
node reads it and sends it through the transformers, and only the result crosses the network
(as kubectl etl object NAME etl:OBJECT - does). Reading needs the ClusterRole mlkube-datapath-viewer bound in the namespace to
--service-account, a Transform mlkube-datapath-user.`,
		Example: `  # An object as stored
  kubectl etl cat raw/notes.txt

  # Through md5, then upper, with arguments
  kubectl etl cat raw/notes.txt --transform 'md5>>upper' --args hex`,
		Args:              cli.ExactArgs("OBJECT"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.transform, "transform", "", "A Transform, or a pipeline a>>b, to send the object through.")
	addArgsFlag(cmd, &o.args)
	_ = cmd.RegisterFlagCompletionFunc("transform", completeTransforms(env))
	addServiceAccountFlag(cmd, env, &o.serviceAccount)
	return cmd
}

func (o *catOptions) Complete(cmd *cobra.Command, args []string) error {
	o.cmd, o.object = cmd, objectArg(args[0])
	return nil
}

func (o *catOptions) Validate() error {
	if err := wire.CheckObject(o.object); err != nil {
		return err
	}
	if o.args != "" && o.transform == "" {
		return cli.UsageError(o.cmd, "--args goes with --transform")
	}
	if o.transform == "" {
		return nil
	}
	return checkPipeline(o.cmd, "--transform", o.transform, o.args)
}

func (o *catOptions) Run(ctx context.Context) error {
	c, forwarder, stop, err := openObjects(ctx, o.env, o.dataPath, o.serviceAccount)
	if err != nil {
		return err
	}
	defer stop()
	if o.transform != "" {
		return c.transformStored(ctx, forwarder, o.transform, o.object, o.args, o.env.Out)
	}
	body, info, err := c.Get(ctx, o.object)
	if err != nil {
		return err
	}
	defer body.Close()
	return copyVerified(o.env.Out, body, o.object, info.Checksum)
}
