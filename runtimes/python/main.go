package python

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/mlkube/mlkube/sdk/transformer"
)

// Main is the runtime's command line: it reads the Config from the
// environment, starts the workers and serves the function until SIGTERM. It
// returns the exit status; a configuration or a source that fails is reported
// on stderr with exit status 1, before the server starts (the pod never
// becomes ready, and the controller reports the container's end).
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("runtime-python", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workers := fs.Int("workers", runtime.NumCPU(), "Python worker processes: the most objects transformed at once")
	python := fs.String("python", "python3", "the Python interpreter")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	conf, err := ConfigFromEnv(os.Getenv)
	if err != nil {
		fmt.Fprintln(stderr, "runtime-python:", err)
		return 1
	}
	rt, err := Start(context.Background(), conf, Options{Python: *python, Workers: *workers, Stderr: stderr})
	if err != nil {
		fmt.Fprintln(stderr, "runtime-python:", err)
		return 1
	}
	transformer.Main(rt.Transform) // exits by itself on failure
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rt.Close(ctx)
	return 0
}
