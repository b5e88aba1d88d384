package psrendezvous

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/mlkube/mlkube/api/mxnet/mxconfig"
)

// Knobs the e2e tests set on the workload itself; the command also accepts each as
// a flag (see [Knobs]).
const (
	EnvDeadline       = "MXJOB_DEADLINE"
	EnvServerPort     = "MXJOB_SERVER_PORT"
	EnvSleep          = "MXJOB_SLEEP"
	EnvFailReplica    = "MXJOB_FAIL_REPLICA"
	EnvFailCode       = "MXJOB_FAIL_CODE"
	EnvFailMode       = "MXJOB_FAIL_MODE"
	EnvFailOnceMarker = "MXJOB_FAIL_ONCE_MARKER"
)

// Knob is a workload setting read from the environment.
type Knob struct {
	Env, Usage string
}

// Knobs lists the MXJOB_* settings, so the command can offer each as a flag without
// a second parsing path.
var Knobs = []Knob{
	{EnvDeadline, "how long to wait for all peers before failing (Go duration, default " + DefaultDeadline.String() + ")"},
	{EnvServerPort, "port a server listens on for pushes (default: DMLC_PS_ROOT_PORT)"},
	{EnvSleep, "sleep this long after the rendezvous, before exiting (Go duration)"},
	{EnvFailReplica, "replica that fails on purpose, e.g. worker-1 or scheduler"},
	{EnvFailCode, "exit code of the injected failure (1-255)"},
	{EnvFailMode, `"always" or "once"`},
	{EnvFailOnceMarker, `file recording that the "once" failure happened; must survive pod recreation`},
}

// DefaultDeadline bounds a rendezvous when MXJOB_DEADLINE is unset: long enough for
// image pulls and a slow scheduler Service, short enough for an e2e suite.
const DefaultDeadline = 120 * time.Second

// maxReplicas bounds counts and indices, only to reject absurd values early.
const maxReplicas = 10000

// Role is a DMLC_ROLE value.
type Role string

// The three DMLC roles.
const (
	RoleScheduler Role = "scheduler"
	RoleServer    Role = "server"
	RoleWorker    Role = "worker"
)

// NodeName names a replica in logs, errors and MXJOB_FAIL_REPLICA: "scheduler"
// (there is only one), "server-<i>" or "worker-<i>".
func NodeName(r Role, index int) string {
	if r == RoleScheduler {
		return string(RoleScheduler)
	}
	return fmt.Sprintf("%s-%d", r, index)
}

// Topology is how many servers and workers a dist job has.
type Topology struct {
	Servers, Workers int
}

// ServerNames lists server-0..server-(n-1).
func (t Topology) ServerNames() []string { return nodeNames(RoleServer, t.Servers) }

// WorkerNames lists worker-0..worker-(n-1).
func (t Topology) WorkerNames() []string { return nodeNames(RoleWorker, t.Workers) }

// PeerNames lists the scheduler's peers: all servers, then all workers.
func (t Topology) PeerNames() []string { return append(t.ServerNames(), t.WorkerNames()...) }

func nodeNames(r Role, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = NodeName(r, i)
	}
	return names
}

// Config is one replica's view of its job, read from the environment.
type Config struct {
	Role Role
	// Index is DMLC_WORKER_ID for workers and MX_CONFIG's task.index otherwise,
	// because the DMLC variables give servers no index of their own.
	Index int
	// Local is true in local mode (DMLC_PS_ROOT_URI empty): one worker, no peers.
	Local bool
	Topology
	// SchedulerAddr is DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT; empty in local mode.
	SchedulerAddr string
	// ListenPort is where the scheduler (DMLC_PS_ROOT_PORT) or a server
	// (MXJOB_SERVER_PORT, default DMLC_PS_ROOT_PORT) listens.
	ListenPort int
	Deadline   time.Duration
	Sleep      time.Duration
	Fail       FailurePlan
	MXConfig   mxconfig.Config
}

// Node is this replica's [NodeName].
func (c Config) Node() string { return NodeName(c.Role, c.Index) }

// ConfigFromEnv reads and cross-checks the DMLC contract and the MXJOB_* knobs.
// It reports every problem at once, each naming its variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	r := &envReader{getenv: getenv}
	var c Config
	c.Role = r.role()
	if v := getenv(mxconfig.EnvUseKubernetes); v != "1" {
		r.fail(mxconfig.EnvUseKubernetes, `must be "1", got %q`, v)
	}
	uri := getenv(mxconfig.EnvRootURI)
	rootPort := r.requiredInt(mxconfig.EnvRootPort, 0, 65535)
	c.Servers = r.requiredInt(mxconfig.EnvNumServer, 0, maxReplicas)
	c.Workers = r.requiredInt(mxconfig.EnvNumWorker, 0, maxReplicas)
	c.Local = uri == ""
	if c.Local {
		r.checkLocal(c, rootPort)
	} else {
		r.checkDist(c, rootPort)
		c.SchedulerAddr = net.JoinHostPort(uri, strconv.Itoa(rootPort))
	}
	c.ListenPort = rootPort
	if c.Role == RoleServer {
		c.ListenPort = r.optionalInt(EnvServerPort, rootPort, 0, 65535)
	}
	if c.Role == RoleWorker {
		c.Index = r.requiredInt(mxconfig.EnvWorkerID, 0, maxReplicas)
	}
	c.MXConfig = r.mxConfig()
	if len(r.errs) == 0 {
		// Cross-checking against values that failed to parse would only add noise.
		c.Index = r.checkMXConfig(c, uri, rootPort)
	}
	c.Deadline = r.duration(EnvDeadline, DefaultDeadline, "a positive")
	c.Sleep = r.duration(EnvSleep, 0, "a non-negative")
	c.Fail = r.failurePlan(c.Local, c.Topology)
	return c, errors.Join(r.errs...)
}

func (r *envReader) role() Role {
	v := Role(r.getenv(mxconfig.EnvRole))
	switch v {
	case RoleScheduler, RoleServer, RoleWorker:
	default:
		r.fail(mxconfig.EnvRole, `must be "scheduler", "server" or "worker", got %q`, v)
	}
	return v
}

// checkLocal holds local mode to what the controller promises for it.
func (r *envReader) checkLocal(c Config, rootPort int) {
	if rootPort != 0 {
		r.fail(mxconfig.EnvRootPort, `must be "0" in local mode (%s empty), got %d`, mxconfig.EnvRootURI, rootPort)
	}
	if c.Role == RoleScheduler || c.Role == RoleServer {
		r.fail(mxconfig.EnvRole, `must be "worker" in local mode (%s empty), got %q`, mxconfig.EnvRootURI, c.Role)
	}
	if c.Servers != 0 {
		r.fail(mxconfig.EnvNumServer, "must be 0 in local mode (%s empty), got %d", mxconfig.EnvRootURI, c.Servers)
	}
	if c.Workers != 1 {
		r.fail(mxconfig.EnvNumWorker, "must be 1 in local mode (%s empty), got %d", mxconfig.EnvRootURI, c.Workers)
	}
}

// checkDist rejects a dist job that could never complete.
func (r *envReader) checkDist(c Config, rootPort int) {
	if rootPort == 0 {
		r.fail(mxconfig.EnvRootPort, "must be a port (1-65535) in dist mode (%s set)", mxconfig.EnvRootURI)
	}
	if c.Servers == 0 {
		r.fail(mxconfig.EnvNumServer, "must be at least 1 in dist mode (%s set)", mxconfig.EnvRootURI)
	}
	if c.Workers == 0 {
		r.fail(mxconfig.EnvNumWorker, "must be at least 1 in dist mode (%s set)", mxconfig.EnvRootURI)
	}
}

// envReader parses variables and collects every problem, so one run reports all.
type envReader struct {
	getenv func(string) string
	errs   []error
	failed map[string]bool
}

// fail records a problem with variable name. Only the first problem of each
// variable is kept: the later checks of a value that did not parse only repeat it.
func (r *envReader) fail(name, format string, args ...any) {
	if r.failed[name] {
		return
	}
	if r.failed == nil {
		r.failed = map[string]bool{}
	}
	r.failed[name] = true
	r.add(name, format, args...)
}

func (r *envReader) add(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

func (r *envReader) requiredInt(name string, lo, hi int) int {
	v := r.getenv(name)
	if v == "" {
		r.fail(name, "required but not set")
		return 0
	}
	return r.parseInt(name, v, lo, hi)
}

func (r *envReader) optionalInt(name string, def, lo, hi int) int {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	return r.parseInt(name, v, lo, hi)
}

func (r *envReader) parseInt(name, v string, lo, hi int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		r.fail(name, "must be an integer in %d..%d, got %q", lo, hi, v)
		return 0
	}
	return n
}

// duration parses a Go duration; kind is "a positive" or "a non-negative".
func (r *envReader) duration(name string, def time.Duration, kind string) time.Duration {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d == 0 && kind == "a positive") {
		r.fail(name, "must be %s duration such as 90s or 2m, got %q", kind, v)
		return def
	}
	return d
}
