package psrendezvous

import "github.com/mlkube/mlkube/api/mxnet/mxconfig"

// endpoints returns the cluster entries of one role.
func endpoints(c mxconfig.Cluster, r Role) []mxconfig.Endpoint {
	switch r {
	case RoleScheduler:
		return c.Scheduler
	case RoleServer:
		return c.Server
	default:
		return c.Worker
	}
}

func (r *envReader) mxConfig() mxconfig.Config {
	v := r.getenv(mxconfig.EnvName)
	if v == "" {
		r.fail(mxconfig.EnvName, "required but not set")
		return mxconfig.Config{}
	}
	c, err := mxconfig.Parse(v)
	if err != nil {
		r.fail(mxconfig.EnvName, "%v", err)
	}
	return c
}

// checkMXConfig holds MX_CONFIG to agree with the DMLC variables, since both are
// the controller's description of the same job, and returns this replica's index.
// It runs only on values that parsed, so every mismatch is a finding of its own.
func (r *envReader) checkMXConfig(c Config, rootURI string, rootPort int) int {
	mx := c.MXConfig
	mismatch := func(format string, args ...any) { r.add(mxconfig.EnvName, format, args...) }
	if mx.Task.Type != string(c.Role) {
		mismatch("task.type is %q but %s is %q", mx.Task.Type, mxconfig.EnvRole, c.Role)
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
		{RoleScheduler, schedulers, mxconfig.EnvRootURI},
		{RoleServer, c.Servers, mxconfig.EnvNumServer},
		{RoleWorker, c.Workers, mxconfig.EnvNumWorker},
	} {
		if n := len(endpoints(mx.Cluster, want.role)); n != want.count {
			mismatch("cluster.%s has %d entries but %s implies %d", want.role, n, want.env, want.count)
		}
	}
	if s := mx.Cluster.Scheduler; len(s) == 1 && (s[0].URL != rootURI || int(s[0].Port) != rootPort) {
		mismatch("cluster.scheduler[0] is %s:%d but %s:%s is %s:%d",
			s[0].URL, s[0].Port, mxconfig.EnvRootURI, mxconfig.EnvRootPort, rootURI, rootPort)
	}
	if n := len(endpoints(mx.Cluster, c.Role)); mx.Task.Index < 0 || mx.Task.Index >= n {
		mismatch("task.index %d is outside cluster.%s (%d entries)", mx.Task.Index, c.Role, n)
	}
	if c.Role == RoleWorker && mx.Task.Index != c.Index {
		mismatch("task.index is %d but %s is %d", mx.Task.Index, mxconfig.EnvWorkerID, c.Index)
	}
	return mx.Task.Index
}
