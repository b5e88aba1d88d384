package psrendezvous

import (
	"encoding/json"
	"fmt"
)

// MXConfig is the MX_CONFIG variable:
// {"cluster":{"scheduler":[{"url":"j-scheduler-0","port":9091}],"server":[…],"worker":[…]},"task":{"type":"worker","index":0}}.
type MXConfig struct {
	Cluster MXCluster `json:"cluster"`
	Task    MXTask    `json:"task"`
}

// MXCluster lists every replica of the job by role.
type MXCluster struct {
	Scheduler []MXEndpoint `json:"scheduler"`
	Server    []MXEndpoint `json:"server"`
	Worker    []MXEndpoint `json:"worker"`
}

// MXEndpoint is one replica's Service name and port.
type MXEndpoint struct {
	URL  string `json:"url"`
	Port int    `json:"port"`
}

// MXTask says which replica the variable was written for.
type MXTask struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// ParseMXConfig decodes MX_CONFIG. Unknown fields are allowed because MXNet
// launchers add their own (the kubeflow operator adds "labels").
func ParseMXConfig(s string) (MXConfig, error) {
	var c MXConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return MXConfig{}, fmt.Errorf("not valid JSON: %w", err)
	}
	return c, nil
}

// endpoints returns the cluster entries of one role.
func (c MXCluster) endpoints(r Role) []MXEndpoint {
	switch r {
	case RoleScheduler:
		return c.Scheduler
	case RoleServer:
		return c.Server
	default:
		return c.Worker
	}
}

func (r *envReader) mxConfig() MXConfig {
	v := r.getenv(EnvMXConfig)
	if v == "" {
		r.fail(EnvMXConfig, "required but not set")
		return MXConfig{}
	}
	c, err := ParseMXConfig(v)
	if err != nil {
		r.fail(EnvMXConfig, "%v", err)
	}
	return c
}

// checkMXConfig holds MX_CONFIG to agree with the DMLC variables, since both are
// the controller's description of the same job, and returns this replica's index.
// It runs only on values that parsed, so every mismatch is a finding of its own.
func (r *envReader) checkMXConfig(c Config, rootURI string, rootPort int) int {
	mx := c.MXConfig
	mismatch := func(format string, args ...any) { r.add(EnvMXConfig, format, args...) }
	if mx.Task.Type != string(c.Role) {
		mismatch("task.type is %q but %s is %q", mx.Task.Type, EnvRole, c.Role)
	}
	schedulers := 1
	if c.Local {
		schedulers = 0
	}
	for _, want := range []struct {
		role  Role
		count int
		env   string
	}{
		{RoleScheduler, schedulers, EnvRootURI},
		{RoleServer, c.Servers, EnvNumServer},
		{RoleWorker, c.Workers, EnvNumWorker},
	} {
		if n := len(mx.Cluster.endpoints(want.role)); n != want.count {
			mismatch("cluster.%s has %d entries but %s implies %d", want.role, n, want.env, want.count)
		}
	}
	if s := mx.Cluster.Scheduler; len(s) == 1 && (s[0].URL != rootURI || s[0].Port != rootPort) {
		mismatch("cluster.scheduler[0] is %s:%d but %s:%s is %s:%d",
			s[0].URL, s[0].Port, EnvRootURI, EnvRootPort, rootURI, rootPort)
	}
	if n := len(mx.Cluster.endpoints(c.Role)); mx.Task.Index < 0 || mx.Task.Index >= n {
		mismatch("task.index %d is outside cluster.%s (%d entries)", mx.Task.Index, c.Role, n)
	}
	if c.Role == RoleWorker && mx.Task.Index != c.Index {
		mismatch("task.index is %d but %s is %d", mx.Task.Index, EnvWorkerID, c.Index)
	}
	return mx.Task.Index
}
