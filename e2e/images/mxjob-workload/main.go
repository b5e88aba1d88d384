// Command mxjob-workload is the image the MxJob e2e tests run in every replica's
// "mxnet" container: a parameter-server rendezvous wired only by the DMLC
// environment the controller sets (see package psrendezvous).
//
// Every MXJOB_* variable can also be given as a flag named after it
// (MXJOB_FAIL_REPLICA → -fail-replica); a flag wins over the variable.
//
// Exit codes: 0 the rendezvous (or local computation) succeeded; 1 it did not,
// with a message naming the missing peers; 2 the environment or flags are wrong;
// MXJOB_FAIL_CODE for an injected failure; 143 terminated by SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/mlkube/mlkube/e2e/workloads/psrendezvous"
)

// Exit codes other than 0 and an injected failure's.
const (
	exitFailed     = 1
	exitUsage      = 2
	exitTerminated = 128 + int(syscall.SIGTERM) // what a shell reports for a SIGTERM'd process
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: arguments, environment and output come in,
// the exit code goes out.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	getenv, err := parseFlags(args, getenv, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		return exitUsage
	}
	cfg, err := psrendezvous.ConfigFromEnv(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "mxjob-workload: invalid environment:\n%v\n", err)
		return exitUsage
	}
	err = psrendezvous.Run(ctx, cfg, stdout)
	if err != nil {
		fmt.Fprintln(stderr, err)
	}
	var injected *psrendezvous.InjectedFailure
	switch {
	case err == nil:
		return 0
	case errors.As(err, &injected):
		return injected.Code
	case ctx.Err() != nil:
		return exitTerminated
	default:
		return exitFailed
	}
}

// parseFlags turns every knob into a flag that overrides its variable, so that
// flags and environment share one parser and one set of error messages.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (func(string) string, error) {
	fs := flag.NewFlagSet("mxjob-workload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	set := map[string]string{}
	for _, k := range psrendezvous.Knobs {
		fs.Func(flagName(k.Env), k.Usage+" (env "+k.Env+")", func(v string) error {
			set[k.Env] = v
			return nil
		})
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected arguments %q", fs.Args())
		fmt.Fprintln(stderr, "mxjob-workload:", err)
		return nil, err
	}
	return func(k string) string {
		if v, ok := set[k]; ok {
			return v
		}
		return getenv(k)
	}, nil
}

// flagName derives a flag from a variable: MXJOB_FAIL_REPLICA → fail-replica.
func flagName(env string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "MXJOB_")), "_", "-")
}
