package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// Command is the options struct of one command, run as kubectl runs its own: Complete fills the
// fields from flags, arguments and the environment, Validate rejects combinations before any API
// call, Run does the work.
type Command interface {
	Complete(cmd *cobra.Command, args []string) error
	Validate() error
	Run(ctx context.Context) error
}

// RunE adapts a Command to cobra.
func RunE(o Command) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.Complete(cmd, args); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}
