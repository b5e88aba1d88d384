package mxconfig

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStringThenParseRoundTrips(t *testing.T) {
	c := Config{
		Cluster: Cluster{
			Scheduler: []Endpoint{{URL: "j-scheduler-0", Port: 9091}},
			Server:    []Endpoint{},
			Worker:    []Endpoint{{URL: "j-worker-0", Port: 9091}, {URL: "j-worker-1", Port: 9091}},
		},
		Task: Task{Type: "worker", Index: 1},
	}
	want := `{"cluster":{"scheduler":[{"url":"j-scheduler-0","port":9091}],"server":[],` +
		`"worker":[{"url":"j-worker-0","port":9091},{"url":"j-worker-1","port":9091}]},"task":{"type":"worker","index":1}}`
	if got := c.String(); got != want {
		t.Errorf("String() = %s\nwant        %s", got, want)
	}
	back, err := Parse(c.String())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, back); diff != "" {
		t.Errorf("Parse(String()) (-want +got):\n%s", diff)
	}
}

func TestParseAllowsLaunchersFields(t *testing.T) {
	if _, err := Parse(`{"cluster":{},"task":{"type":"worker","index":0},"labels":{"a":"b"}}`); err != nil {
		t.Errorf("Parse with an extra field: %v", err)
	}
	if _, err := Parse(`{"cluster":`); err == nil {
		t.Error("Parse of broken JSON: no error")
	}
}

func TestParseKubeflowConfig(t *testing.T) {
	// The kubeflow operator adds "labels"; unknown fields must not break parsing.
	got, err := Parse(`{"cluster":{"scheduler":[{"url":"j-scheduler-0","port":9091}],` +
		`"server":[{"url":"j-server-0","port":9092}],"worker":[{"url":"j-worker-0","port":9093}]},` +
		`"labels":{"scheduler":""},"task":{"type":"server","index":0}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Cluster: Cluster{
			Scheduler: []Endpoint{{URL: "j-scheduler-0", Port: 9091}},
			Server:    []Endpoint{{URL: "j-server-0", Port: 9092}},
			Worker:    []Endpoint{{URL: "j-worker-0", Port: 9093}},
		},
		Task: Task{Type: "server", Index: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("MX_CONFIG (-want +got):\n%s", diff)
	}
	if _, err := Parse(`{"cluster":{"worker":"j-worker-0"}}`); err == nil {
		t.Error("a cluster entry that is not a list parsed without error")
	}
}

// String renders the cluster once and adds the task: its bytes must stay what json.Marshal
// makes of the whole Config, which readers in other languages parse.
func TestStringIsTheWholeConfigMarshalled(t *testing.T) {
	cluster := Cluster{
		Scheduler: []Endpoint{{URL: "j-scheduler-0", Port: 9091}},
		Server:    nil,
		Worker:    []Endpoint{{URL: "j-\"worker\"-0<&>", Port: 9091}, {URL: "j-worker-1", Port: -1}},
	}
	encoded := cluster.Encode()
	for _, task := range []Task{{Type: "worker", Index: 1}, {Type: "sch\"eduler\u2028", Index: 0}, {}} {
		c := Config{Cluster: cluster, Task: task}
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.String(); got != string(want) {
			t.Errorf("String() = %s\nwant        %s", got, want)
		}
		if got := encoded.For(task); got != string(want) {
			t.Errorf("Encode().For(%+v) = %s\nwant                %s", task, got, want)
		}
	}
}
