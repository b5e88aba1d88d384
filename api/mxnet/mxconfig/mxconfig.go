// Package mxconfig is the replica environment contract of MxJobs: the DMLC variables and
// MX_CONFIG, the JSON description of a whole MxJob that the MxJob
// controller gives every replica and that MXNet launchers, and mlkube's own test workload, read.
// Both sides use these types, so the writer and the readers cannot drift apart. It imports only
// the standard library: a workload links none of Kubernetes by reading it.
package mxconfig

import (
	"encoding/json"
	"fmt"
	"strings"
)

// EnvName is the environment variable that carries the configuration.
const EnvName = "MX_CONFIG"

// The DMLC environment the controller sets beside MX_CONFIG on every replica's containers: what
// ps-lite and MXNet read to find the scheduler and size the topology, and what mlkube's test
// workload checks.
const (
	EnvRole          = "DMLC_ROLE"
	EnvRootURI       = "DMLC_PS_ROOT_URI"
	EnvRootPort      = "DMLC_PS_ROOT_PORT"
	EnvNumServer     = "DMLC_NUM_SERVER"
	EnvNumWorker     = "DMLC_NUM_WORKER"
	EnvUseKubernetes = "DMLC_USE_KUBERNETES"
	EnvWorkerID      = "DMLC_WORKER_ID"
)

// Config is the value of MX_CONFIG:
// {"cluster":{"scheduler":[{"url":"j-scheduler-0","port":9091}],"server":[…],"worker":[…]},"task":{"type":"worker","index":0}}.
type Config struct {
	Cluster Cluster `json:"cluster"`
	Task    Task    `json:"task"`
}

// Cluster lists every replica of the job by role.
type Cluster struct {
	Scheduler []Endpoint `json:"scheduler"`
	Server    []Endpoint `json:"server"`
	Worker    []Endpoint `json:"worker"`
}

// Endpoint is one replica's Service name, which resolves to its pod, and port.
type Endpoint struct {
	URL  string `json:"url"`
	Port int32  `json:"port"`
}

// Task says which replica the variable was written for: its role in lower case and its index.
type Task struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// String renders the configuration as the JSON that MX_CONFIG holds.
func (c Config) String() string {
	return c.Cluster.Encode().For(c.Task)
}

// EncodedCluster is a Cluster rendered once, to be completed with each replica's Task. Every
// replica's MX_CONFIG lists the whole job, so rendering it replica by replica costs the square
// of the job's size: 40,000 endpoints for a job of 200 workers.
type EncodedCluster struct{ raw []byte }

// Encode renders the cluster for For.
func (c Cluster) Encode() EncodedCluster {
	return EncodedCluster{raw: marshal(c)}
}

// For is MX_CONFIG for the replica t, the same bytes Config{Cluster: c, Task: t}.String()
// would hold if json.Marshal rendered the whole Config.
func (e EncodedCluster) For(t Task) string {
	task := marshal(t)
	var b strings.Builder
	b.Grow(len(`{"cluster":,"task":}`) + len(e.raw) + len(task))
	b.WriteString(`{"cluster":`)
	b.Write(e.raw)
	b.WriteString(`,"task":`)
	b.Write(task)
	b.WriteByte('}')
	return b.String()
}

func marshal(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings and ints always marshal
	}
	return raw
}

// Parse decodes MX_CONFIG. Unknown fields are allowed because MXNet launchers add their own (the
// kubeflow operator adds "labels").
func Parse(s string) (Config, error) {
	var c Config
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return Config{}, fmt.Errorf("not valid JSON: %w", err)
	}
	return c, nil
}
