package psrendezvous

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
)

// Failure modes.
const (
	FailAlways = "always"
	FailOnce   = "once"
)

// FailurePlan makes one replica exit with a chosen code, so e2e tests can check
// restart policies and backoff limits against a real process.
type FailurePlan struct {
	// Replica is the NodeName that fails ("scheduler-0" works too, matching the
	// pod name); empty disables the plan.
	Replica string
	Code    int
	Mode    string
	// OnceMarker is a file on storage that outlives the pod (an emptyDir does
	// not survive pod recreation; a hostPath or PVC does). Its presence means the
	// failure already happened.
	OnceMarker string
}

// InjectedFailure is the error of a replica failing on purpose; the command exits
// with Code.
type InjectedFailure struct {
	Node string
	Code int
}

func (e *InjectedFailure) Error() string {
	return fmt.Sprintf("%s: injected failure, exit code %d", e.Node, e.Code)
}

func (r *envReader) failurePlan(local bool, topo Topology) FailurePlan {
	p := FailurePlan{
		Replica:    r.getenv(EnvFailReplica),
		Code:       r.optionalInt(EnvFailCode, 1, 1, 255),
		Mode:       r.getenv(EnvFailMode),
		OnceMarker: r.getenv(EnvFailOnceMarker),
	}
	switch p.Mode {
	case "":
		p.Mode = FailAlways
	case FailAlways, FailOnce:
	default:
		r.fail(EnvFailMode, "must be %q or %q, got %q", FailAlways, FailOnce, p.Mode)
	}
	if p.Replica == "" {
		return p
	}
	if p.Replica == "scheduler-0" {
		// The pod's name; the node's name has no index since there is one.
		p.Replica = NodeName(RoleScheduler, 0)
	}
	replicas := append([]string{NodeName(RoleScheduler, 0)}, topo.PeerNames()...)
	if local {
		replicas = []string{NodeName(RoleWorker, 0)}
	}
	if !slices.Contains(replicas, p.Replica) {
		r.fail(EnvFailReplica, "%q names no replica of this job (one of %v)", p.Replica, replicas)
	}
	if p.Mode == FailOnce && p.OnceMarker == "" {
		r.fail(EnvFailOnceMarker, "required when %s is %q", EnvFailMode, FailOnce)
	}
	return p
}

// Check returns an [*InjectedFailure] if node must fail now. In "once" mode it
// first creates the marker, so that the recreated pod finds it and runs normally
// even if this process is killed right after.
func (p FailurePlan) Check(node string, logger *log.Logger) error {
	if p.Replica != node {
		return nil
	}
	if p.Mode == FailOnce {
		_, err := os.Stat(p.OnceMarker)
		switch {
		case err == nil:
			logger.Printf(LogFailedOnce, p.OnceMarker)
			return nil
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%s: %s: %w", node, EnvFailOnceMarker, err)
		}
		if err := writeMarker(p.OnceMarker, node); err != nil {
			return fmt.Errorf("%s: %s: %w", node, EnvFailOnceMarker, err)
		}
	}
	logger.Printf(LogInjecting, p.Code, p.Mode)
	return &InjectedFailure{Node: node, Code: p.Code}
}

// writeMarker creates path atomically (temp file in the same directory, synced,
// then renamed): the marker is either absent or complete and on disk, whatever
// happens to the pod or node right after.
func writeMarker(path, node string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s failed once on purpose\n", node)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
