package cli_test

import (
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func TestWaitFlags(t *testing.T) {
	cases := map[string]struct {
		args        []string
		wantErr     string
		wantFor     []string
		wantTimeout time.Duration
		wantAwaited string
	}{
		"defaults":   {wantFor: []string{"Done"}, wantTimeout: cli.DefaultWaitTimeout, wantAwaited: "Done"},
		"several":    {args: []string{"--for=Done,Failed", "--timeout=0"}, wantFor: []string{"Done", "Failed"}, wantAwaited: "Done or Failed"},
		"not a step": {args: []string{"--for=done"}, wantErr: "--for \"done\" is not a step; use Done, Failed; see 'wait --help'"},
		"negative":   {args: []string{"--timeout=-1s"}, wantErr: "--timeout must not be negative; see 'wait --help'"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &cli.WaitFlags{Noun: "step", Allowed: []string{"Done", "Failed"}}
			cmd := &cobra.Command{Use: "wait"}
			f.AddFlags(cmd, "Done", " (a note)", "")
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			err := f.Validate(cmd)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Validate() = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Awaited(); got != tc.wantAwaited || f.Timeout != tc.wantTimeout {
				t.Errorf("Awaited() = %q, Timeout = %s; want %q, %s", got, f.Timeout, tc.wantAwaited, tc.wantTimeout)
			}
		})
	}
	f := &cli.WaitFlags{Noun: "step", Allowed: []string{"Done", "Failed"}}
	cmd := &cobra.Command{Use: "wait"}
	f.AddFlags(cmd, "Done", " (a note)", "")
	if got, want := cmd.Flag("for").Usage, "Steps to wait for: Done, Failed (a note)."; got != want {
		t.Errorf("--for's help %q, want %q", got, want)
	}
}
