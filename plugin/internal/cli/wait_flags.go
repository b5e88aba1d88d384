package cli

import (
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// WaitFlags are wait's --for and --timeout, the same in both plugins.
type WaitFlags struct {
	// Noun is what --for names, in its help and errors: "stage", "state", "phase".
	Noun string
	// Allowed are the values --for takes.
	Allowed []string
	For     []string
	Timeout time.Duration
}

// DefaultWaitTimeout is how long wait waits unless --timeout says otherwise.
const DefaultWaitTimeout = 30 * time.Minute

// timeoutHelp is --timeout's help where the command does not say more.
const timeoutHelp = "Give up after this long (exit code 2); 0 waits forever."

// AddFlags binds --for, def unless given, its help ending in forNote, and --timeout with
// timeoutUsage (a general one when empty).
func (f *WaitFlags) AddFlags(cmd *cobra.Command, def, forNote, timeoutUsage string) {
	if timeoutUsage == "" {
		timeoutUsage = timeoutHelp
	}
	forUsage := strings.ToUpper(f.Noun[:1]) + f.Noun[1:] + "s to wait for: " + strings.Join(f.Allowed, ", ") + forNote + "."
	cmd.Flags().StringSliceVar(&f.For, "for", []string{def}, forUsage)
	cmd.Flags().DurationVar(&f.Timeout, "timeout", DefaultWaitTimeout, timeoutUsage)
	_ = cmd.RegisterFlagCompletionFunc("for", cobra.FixedCompletions(f.Allowed, cobra.ShellCompDirectiveNoFileComp))
}

// Validate checks every --for is allowed and --timeout is not negative.
func (f *WaitFlags) Validate(cmd *cobra.Command) error {
	for _, s := range f.For {
		if !slices.Contains(f.Allowed, s) {
			return UsageError(cmd, "--for %q is not a %s; use %s", s, f.Noun, strings.Join(f.Allowed, ", "))
		}
	}
	return ValidateTimeout(cmd, f.Timeout)
}

// Awaited is --for as messages say it: "Succeeded or Failed".
func (f *WaitFlags) Awaited() string { return strings.Join(f.For, " or ") }

// ValidateTimeout refuses a negative --timeout.
func ValidateTimeout(cmd *cobra.Command, timeout time.Duration) error {
	if timeout < 0 {
		return UsageError(cmd, "--timeout must not be negative")
	}
	return nil
}
