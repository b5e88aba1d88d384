// Command cluster brings the e2e cluster up and down: kind where a container engine answers, the
// docker-less local cluster otherwise (MLKUBE_CLUSTER_PROVIDER=kind|local forces one).
//
//	go run ./e2e/cmd/cluster up           # create, with metrics-server, an S3 server and Kueue; prints the kubeconfig path
//	go run ./e2e/cmd/cluster kueue        # install Kueue on the cluster up made without it
//	go run ./e2e/cmd/cluster load-images  # every tarball in _output/images, or the ones given
//	go run ./e2e/cmd/cluster kubeconfig   # print the kubeconfig path
//	go run ./e2e/cmd/cluster down         # remove everything up made
//
// MLKUBE_E2E_KUEUE says when Kueue is installed: 1 (the default) by up, before mlkube is
// deployed; later (make e2e's whole suite, which runs first on a cluster without Kueue) by the
// kueue command, after the rest of the suite; 0 never (make e2e-release).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mlkube/mlkube/e2e/cluster"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/repo"
)

const usage = "usage: cluster up | kueue | down | load-images [tarball...] | kubeconfig"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	kueueAtUp, err := kueueAtUp(os.Getenv("MLKUBE_E2E_KUEUE"))
	if err != nil {
		return err
	}
	p, err := cluster.Select()
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%s] "+format+"\n", append([]any{p.Name()}, a...)...)
	}
	if l, ok := p.(interface{ SetLogf(func(string, ...any)) }); ok {
		l.SetLogf(logf)
	}
	// controller-runtime's clients (installing metrics-server, say) log the API server's
	// warnings; with the rest of the command's lines. Unset, they would be dropped and
	// controller-runtime would print a stack trace saying so.
	fixture.LogAPIWarningsTo(func(line string) { logf("%s", line) })
	began := time.Now()
	defer func() { logf("%s took %v", args[0], time.Since(began).Round(100*time.Millisecond)) }()
	switch args[0] {
	case "up":
		if err := p.Up(ctx); err != nil {
			return fmt.Errorf("%w (logs: _output/cluster/logs)", err)
		}
		// On every provider, so that `kubectl mxjob top` and `kubectl etl metrics` have numbers.
		if err := cluster.InstallMetricsServer(ctx, p, logf); err != nil {
			return fmt.Errorf("metrics-server: %w", err)
		}
		// On every provider, so that TransformRuns read from an ObjectStore.
		if err := cluster.InstallS3Server(ctx, p, logf); err != nil {
			return fmt.Errorf("S3 server: %w", err)
		}
		// Before mlkube is deployed: the manager turns its Kueue integration on at start.
		if kueueAtUp {
			if err := cluster.InstallKueue(ctx, p, logf); err != nil {
				return fmt.Errorf("installing Kueue: %w", err)
			}
		}
		fmt.Println(p.Kubeconfig())
		return nil
	case "kueue":
		// The manager finds Kueue only when it starts: whoever calls this restarts it after.
		if err := cluster.InstallKueue(ctx, p, logf); err != nil {
			return fmt.Errorf("installing Kueue: %w", err)
		}
		return nil
	case "down":
		return p.Down(ctx)
	case "load-images":
		tarballs, err := tarballsToLoad(args[1:])
		if err != nil {
			return err
		}
		return p.LoadImages(ctx, tarballs)
	case "kubeconfig":
		fmt.Println(p.Kubeconfig())
		return nil
	}
	return errors.New(usage)
}

// kueueAtUp reads MLKUBE_E2E_KUEUE: whether up installs Kueue.
func kueueAtUp(v string) (bool, error) {
	switch v {
	case "", "1":
		return true, nil
	case "0", "later":
		return false, nil
	}
	return false, fmt.Errorf("MLKUBE_E2E_KUEUE=%q: want 1 (Kueue installed by up, the default), later (by `cluster kueue`) or 0 (never)", v)
}

// tarballsToLoad is the arguments, or every tarball `go run ./e2e/cmd/images` wrote.
func tarballsToLoad(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	dir, err := repo.Output("images")
	if err != nil {
		return nil, err
	}
	tarballs, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err == nil && len(tarballs) == 0 {
		err = fmt.Errorf("no image tarballs in %s: run `go run ./e2e/cmd/images` first", dir)
	}
	return tarballs, err
}
