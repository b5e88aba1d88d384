package ioshim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Main is the shim's command line: "install <path>", or "[flags] -- command
// [args...]", which serves the command until SIGTERM. It returns the exit
// status.
func Main(args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == InstallSubcommand {
		if len(args) != 2 {
			fmt.Fprintf(stderr, "usage: io-shim %s <path>\n", InstallSubcommand)
			return 2
		}
		if err := Install(args[1]); err != nil {
			fmt.Fprintln(stderr, "io-shim:", err)
			return 1
		}
		return 0
	}
	conf, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	var f transformer.Func
	if conf.persistent {
		var p *Persistent
		if p, err = NewPersistent(conf.command, conf.concurrency, stderr, nil); err == nil {
			err = p.Start(context.Background())
			f = p.Transform
		}
	} else {
		r, rerr := NewRunner(conf.command, conf.concurrency, stderr)
		f, err = r.Transform, rerr
	}
	if err != nil {
		fmt.Fprintln(stderr, "io-shim:", err)
		return 2
	}
	transformer.Main(f) // exits by itself on failure
	return 0
}

type config struct {
	concurrency int
	persistent  bool
	command     []string
}

// parseFlags reads the flags before "--" and the command after it.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("io-shim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: io-shim [flags] -- command [args...]\n       io-shim %s <path>\n", InstallSubcommand)
		fs.PrintDefaults()
	}
	var c config
	fs.IntVar(&c.concurrency, "concurrency", runtime.NumCPU(), "most objects transformed at once (one command each)")
	fs.BoolVar(&c.persistent, strings.TrimPrefix(wire.IOShimPersistent, "--"), false,
		"run the command once per worker, object after object in the framing of sdk/ioframe, not once per object")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	c.command = fs.Args()
	// The flag package drops the first "--"; a command without it would be
	// ambiguous with a mistyped flag.
	if len(c.command) == 0 || len(args) == len(c.command) || args[len(args)-len(c.command)-1] != "--" {
		fs.Usage()
		return c, errors.New("want -- and a command")
	}
	return c, nil
}
