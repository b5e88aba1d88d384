package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// The exit codes of both plugins, the same in every command that waits or checks (wait, health,
// run --wait): scripts tell a failure from a timeout from a question that had no answer.
const (
	// ExitFailed: the awaited thing failed (or the command did).
	ExitFailed = 1
	// ExitTimeout: the wait ran out before the awaited thing finished either way.
	ExitTimeout = 2
	// ExitUnknown: the command could not tell: the object is not found, access is forbidden or
	// the cluster is unreachable.
	ExitUnknown = 3
)

// ExitError carries an exit code other than 1: `wait` exits 2 when it times out, so scripts tell
// a job that failed from one that is still running.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// exitCode is an ExitError's code, else 1.
func exitCode(err error) int {
	if ee, ok := errors.AsType[*ExitError](err); ok {
		return ee.Code
	}
	return 1
}

// UsageError is a mistake in how a command was called; the message points at the command's help.
func UsageError(cmd *cobra.Command, format string, a ...any) error {
	return fmt.Errorf("%s; see '%s --help'", fmt.Sprintf(format, a...), cmd.CommandPath())
}

// ExactArgs requires exactly the named arguments, saying which one is missing.
func ExactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return UsageError(cmd, "%s is required", names[len(args)])
		case len(args) > len(names):
			return UsageError(cmd, "unexpected argument %q", args[len(names)])
		}
		return nil
	}
}
