package psrendezvous

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/api/mxnet/mxconfig"
)

const testMXCluster = `"cluster":{` +
	`"scheduler":[{"url":"train-scheduler-0","port":9091}],` +
	`"server":[{"url":"train-server-0","port":9091},{"url":"train-server-1","port":9091}],` +
	`"worker":[{"url":"train-worker-0","port":9091},{"url":"train-worker-1","port":9091},{"url":"train-worker-2","port":9091}]}`

// distEnv is what the controller gives replica index of role in job "train" with
// 2 servers and 3 workers.
func distEnv(role Role, index int) map[string]string {
	env := map[string]string{
		mxconfig.EnvRole:          string(role),
		mxconfig.EnvRootURI:       "train-scheduler-0",
		mxconfig.EnvRootPort:      "9091",
		mxconfig.EnvNumServer:     "2",
		mxconfig.EnvNumWorker:     "3",
		mxconfig.EnvUseKubernetes: "1",
		mxconfig.EnvName:          fmt.Sprintf(`{%s,"task":{"type":%q,"index":%d}}`, testMXCluster, role, index),
	}
	if role == RoleWorker {
		env[mxconfig.EnvWorkerID] = fmt.Sprint(index)
	}
	return env
}

// localEnv is what the controller gives the one worker of a local job.
func localEnv() map[string]string {
	return map[string]string{
		mxconfig.EnvRole:          "worker",
		mxconfig.EnvRootURI:       "",
		mxconfig.EnvRootPort:      "0",
		mxconfig.EnvNumServer:     "0",
		mxconfig.EnvNumWorker:     "1",
		mxconfig.EnvUseKubernetes: "1",
		mxconfig.EnvWorkerID:      "0",
		mxconfig.EnvName:          `{"cluster":{"worker":[{"url":"solo-worker-0","port":9091}]},"task":{"type":"worker","index":0}}`,
	}
}

// with returns env changed by changes; an empty value unsets the variable.
func with(env map[string]string, changes ...string) map[string]string {
	env = maps.Clone(env)
	for i := 0; i < len(changes); i += 2 {
		env[changes[i]] = changes[i+1]
	}
	return env
}

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestConfigFromEnv(t *testing.T) {
	mx := func(task string) mxconfig.Config {
		c, err := mxconfig.Parse(fmt.Sprintf(`{%s,"task":%s}`, testMXCluster, task))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	topo := Topology{Servers: 2, Workers: 3}
	for name, tc := range map[string]struct {
		env  map[string]string
		want Config
	}{
		"scheduler": {
			env: distEnv(RoleScheduler, 0),
			want: Config{Role: RoleScheduler, Topology: topo, SchedulerAddr: "train-scheduler-0:9091", ListenPort: 9091,
				Deadline: DefaultDeadline, Fail: FailurePlan{Code: 1, Mode: FailAlways}, MXConfig: mx(`{"type":"scheduler","index":0}`)},
		},
		"server index from MX_CONFIG, port override": {
			env: with(distEnv(RoleServer, 1), EnvServerPort, "9200"),
			want: Config{Role: RoleServer, Index: 1, Topology: topo, SchedulerAddr: "train-scheduler-0:9091", ListenPort: 9200,
				Deadline: DefaultDeadline, Fail: FailurePlan{Code: 1, Mode: FailAlways}, MXConfig: mx(`{"type":"server","index":1}`)},
		},
		"worker with knobs": {
			env: with(distEnv(RoleWorker, 2), EnvDeadline, "30s", EnvSleep, "1m", EnvFailReplica, "worker-1",
				EnvFailCode, "137", EnvFailMode, "once", EnvFailOnceMarker, "/data/failed-once"),
			want: Config{Role: RoleWorker, Index: 2, Topology: topo, SchedulerAddr: "train-scheduler-0:9091", ListenPort: 9091,
				Deadline: 30 * time.Second, Sleep: time.Minute, MXConfig: mx(`{"type":"worker","index":2}`),
				Fail: FailurePlan{Replica: "worker-1", Code: 137, Mode: FailOnce, OnceMarker: "/data/failed-once"}},
		},
		"scheduler-0 is the scheduler": {
			env: with(distEnv(RoleWorker, 2), EnvFailReplica, "scheduler-0"),
			want: Config{Role: RoleWorker, Index: 2, Topology: topo, SchedulerAddr: "train-scheduler-0:9091", ListenPort: 9091,
				Deadline: DefaultDeadline, MXConfig: mx(`{"type":"worker","index":2}`),
				Fail: FailurePlan{Replica: "scheduler", Code: 1, Mode: FailAlways}},
		},
		"local": {
			env: localEnv(),
			want: Config{Role: RoleWorker, Local: true, Topology: Topology{Workers: 1}, Deadline: DefaultDeadline,
				Fail:     FailurePlan{Code: 1, Mode: FailAlways},
				MXConfig: mxconfig.Config{Cluster: mxconfig.Cluster{Worker: []mxconfig.Endpoint{{URL: "solo-worker-0", Port: 9091}}}, Task: mxconfig.Task{Type: "worker"}}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ConfigFromEnv(getenv(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigFromEnvErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want []string // every line of the error, in order
	}{
		"nothing set": {
			env: map[string]string{},
			want: []string{
				`DMLC_ROLE: must be "scheduler", "server" or "worker", got ""`,
				`DMLC_USE_KUBERNETES: must be "1", got ""`,
				"DMLC_PS_ROOT_PORT: required but not set",
				"DMLC_NUM_SERVER: required but not set",
				"DMLC_NUM_WORKER: required but not set",
				"MX_CONFIG: required but not set",
			},
		},
		"bad numbers, reported once each": {
			env: with(distEnv(RoleWorker, 0), mxconfig.EnvRootPort, "http", mxconfig.EnvNumWorker, "-1", mxconfig.EnvWorkerID, "one"),
			want: []string{
				`DMLC_PS_ROOT_PORT: must be an integer in 0..65535, got "http"`,
				`DMLC_NUM_WORKER: must be an integer in 0..10000, got "-1"`,
				`DMLC_WORKER_ID: must be an integer in 0..10000, got "one"`,
			},
		},
		"dist without servers": {
			env:  with(distEnv(RoleWorker, 0), mxconfig.EnvNumServer, "0"),
			want: []string{"DMLC_NUM_SERVER: must be at least 1 in dist mode (DMLC_PS_ROOT_URI set)"},
		},
		"local with a port": {
			env:  with(localEnv(), mxconfig.EnvRootPort, "9091"),
			want: []string{`DMLC_PS_ROOT_PORT: must be "0" in local mode (DMLC_PS_ROOT_URI empty), got 9091`},
		},
		"local scheduler": {
			env: with(localEnv(), mxconfig.EnvRole, "scheduler"),
			want: []string{
				`DMLC_ROLE: must be "worker" in local mode (DMLC_PS_ROOT_URI empty), got "scheduler"`,
			},
		},
		"MX_CONFIG not JSON": {
			env:  with(distEnv(RoleWorker, 0), mxconfig.EnvName, `{"cluster":`),
			want: []string{"MX_CONFIG: not valid JSON: unexpected end of JSON input"},
		},
		"MX_CONFIG disagrees with the DMLC variables": {
			env: with(distEnv(RoleWorker, 1), mxconfig.EnvRootURI, "other-scheduler-0", mxconfig.EnvNumWorker, "4", mxconfig.EnvWorkerID, "2"),
			want: []string{
				"MX_CONFIG: cluster.worker has 3 entries but DMLC_NUM_WORKER implies 4",
				"MX_CONFIG: cluster.scheduler[0] is train-scheduler-0:9091 but DMLC_PS_ROOT_URI:DMLC_PS_ROOT_PORT is other-scheduler-0:9091",
				"MX_CONFIG: task.index is 1 but DMLC_WORKER_ID is 2",
			},
		},
		"MX_CONFIG for another role": {
			env:  with(distEnv(RoleServer, 0), mxconfig.EnvRole, "worker", mxconfig.EnvWorkerID, "0"),
			want: []string{`MX_CONFIG: task.type is "server" but DMLC_ROLE is "worker"`},
		},
		"MX_CONFIG index out of range": {
			env:  with(distEnv(RoleServer, 0), mxconfig.EnvName, fmt.Sprintf(`{%s,"task":{"type":"server","index":2}}`, testMXCluster)),
			want: []string{"MX_CONFIG: task.index 2 is outside cluster.server (2 entries)"},
		},
		"bad knobs": {
			env: with(distEnv(RoleWorker, 0), EnvDeadline, "0s", EnvSleep, "soon", EnvServerPort, "70000",
				EnvFailReplica, "worker-3", EnvFailCode, "0", EnvFailMode, "sometimes"),
			want: []string{
				`MXJOB_DEADLINE: must be a positive duration such as 90s or 2m, got "0s"`,
				`MXJOB_SLEEP: must be a non-negative duration such as 90s or 2m, got "soon"`,
				`MXJOB_FAIL_CODE: must be an integer in 1..255, got "0"`,
				`MXJOB_FAIL_MODE: must be "always" or "once", got "sometimes"`,
				`MXJOB_FAIL_REPLICA: "worker-3" names no replica of this job (one of [scheduler server-0 server-1 worker-0 worker-1 worker-2])`,
			},
		},
		"once without marker": {
			env:  with(localEnv(), EnvFailReplica, "worker-0", EnvFailMode, "once"),
			want: []string{`MXJOB_FAIL_ONCE_MARKER: required when MXJOB_FAIL_MODE is "once"`},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ConfigFromEnv(getenv(tc.env))
			if err == nil {
				t.Fatal("got no error")
			}
			if diff := cmp.Diff(tc.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
		})
	}
}
