package cli

import (
	"errors"
	"fmt"
	"strings"

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

// exitCode is an ExitError's code; else 3 when the API could not answer (not found, forbidden,
// unauthorized, mlkube not installed, the cluster unreachable), so that every command — wait,
// health, run --wait — tells "could not tell" from "failed" without doing anything; else 1.
func exitCode(err error) int {
	if ee, ok := errors.AsType[*ExitError](err); ok {
		return ee.Code
	}
	if classify(err) != causeOther {
		return ExitUnknown
	}
	return ExitFailed
}

// helpTail is what ends every usage error: where to read how the command is called.
func helpTail(cmd *cobra.Command) string {
	return fmt.Sprintf("see '%s --help'", cmd.CommandPath())
}

// UsageError is a mistake in how a command was called; the message points at the command's help.
func UsageError(cmd *cobra.Command, format string, a ...any) error {
	return fmt.Errorf("%s; %s", fmt.Sprintf(format, a...), helpTail(cmd))
}

// cobraUsagePrefixes begin the usage errors cobra makes itself (required flags, argument
// counts, flag groups), which reach Execute without the help tail.
var cobraUsagePrefixes = []string{
	"required flag(s)", "accepts ", "requires at least", "requires at most", "received ",
	"if any flags in the group", "at least one of the flags", "invalid argument",
}

// withHelpTail gives cobra's own usage errors the tail the plugins' have.
func withHelpTail(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "; see '") {
		return err
	}
	for _, p := range cobraUsagePrefixes {
		if strings.HasPrefix(msg, p) {
			return fmt.Errorf("%w; %s", err, helpTail(cmd))
		}
	}
	return err
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

// MinArgs requires at least one argument, named name.
func MinArgs(name string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return UsageError(cmd, "%s is required", name)
		}
		return nil
	}
}

// OldFlagName keeps a flag's first name working, hidden from the help, after it was renamed so
// that a flag name means one thing across both plugins. WarnOldFlagName says so on stderr; pflag's
// own deprecation notice would go to stdout, into whatever -o prints.
func OldFlagName(cmd *cobra.Command, old string) {
	_ = cmd.Flags().MarkHidden(old)
}

// WarnOldFlagName tells the user of old to use now instead, saying why.
func WarnOldFlagName(cmd *cobra.Command, old, now, why string) {
	if cmd.Flags().Changed(old) {
		fmt.Fprintf(cmd.ErrOrStderr(), "Flag --%s is now --%s (%s)\n", old, now, why)
	}
}
