package mxconfig

import (
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
