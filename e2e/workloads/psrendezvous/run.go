package psrendezvous

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"slices"
	"strconv"
	"time"
)

// Run plays cfg's role with real networking: it injects the planned failure if
// this replica is the target, runs the rendezvous within cfg.Deadline (or the
// local computation), then sleeps cfg.Sleep. Everything ends promptly when ctx
// does (SIGTERM).
func Run(ctx context.Context, cfg Config, stdout io.Writer) error {
	node := cfg.Node()
	logger := nodeLogger(stdout, node)
	if err := cfg.Fail.Check(node, logger); err != nil {
		return err
	}
	if cfg.Local {
		if err := runLocal(node, logger); err != nil {
			return err
		}
	} else {
		dctx, cancel := context.WithTimeoutCause(ctx, cfg.Deadline, fmt.Errorf("deadline %v exceeded", cfg.Deadline))
		err := runDist(dctx, cfg, stdout)
		cancel()
		if err != nil {
			return err
		}
	}
	if cfg.Sleep > 0 {
		// After the rendezvous, not before: the pods stay Running with their work
		// done, so a test can suspend the job or restart the manager meanwhile.
		logger.Printf(LogSleeping, cfg.Sleep)
		t := time.NewTimer(cfg.Sleep)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("%s: interrupted while sleeping: %w", node, context.Cause(ctx))
		}
	}
	logger.Print(LogFinished)
	return nil
}

// runLocal is local mode's computation: what a server would sum for a job of one
// worker, checked against the closed form.
func runLocal(node string, logger *log.Logger) error {
	got, want := Sum(PushValues(0, 0)), ExpectedAggregate(1, 0)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s: local computation gave %v, want %v", node, got, want)
	}
	logger.Printf(LogLocal, got)
	return nil
}

func runDist(ctx context.Context, cfg Config, stdout io.Writer) error {
	var dialer net.Dialer
	switch cfg.Role {
	case RoleScheduler, RoleServer:
		// All interfaces: peers reach the scheduler through its Service and a
		// server through its pod IP.
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort("", strconv.Itoa(cfg.ListenPort)))
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Node(), err)
		}
		if cfg.Role == RoleScheduler {
			return RunScheduler(ctx, ln, cfg.Topology, stdout)
		}
		return RunServer(ctx, ln, dialer.DialContext, cfg.SchedulerAddr, cfg.Index, cfg.Topology, stdout)
	default:
		return RunWorker(ctx, dialer.DialContext, cfg.SchedulerAddr, cfg.Index, cfg.Topology, stdout)
	}
}
