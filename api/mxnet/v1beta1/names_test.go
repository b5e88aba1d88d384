package v1beta1

import "testing"

func TestReplicaName(t *testing.T) {
	if got := ReplicaName("mnist", ReplicaTypeWorker, 3); got != "mnist-worker-3" {
		t.Errorf("ReplicaName = %q, want mnist-worker-3", got)
	}
}

func TestInferMode(t *testing.T) {
	for _, tc := range []struct {
		types []ReplicaType
		want  JobMode
	}{
		{nil, LocalMode},
		{[]ReplicaType{ReplicaTypeWorker}, LocalMode},
		{[]ReplicaType{""}, LocalMode}, // an untyped spec is a WORKER
		{[]ReplicaType{ReplicaTypeWorker, ReplicaTypeWorker}, LocalMode},
		{[]ReplicaType{ReplicaTypeServer, ReplicaTypeWorker}, DistMode},
		{[]ReplicaType{ReplicaTypeWorker, ReplicaTypeScheduler}, DistMode},
	} {
		var specs []ReplicaSpec
		for _, typ := range tc.types {
			specs = append(specs, ReplicaSpec{MxReplicaType: typ})
		}
		if got := InferMode(specs); got != tc.want {
			t.Errorf("InferMode(%v) = %s, want %s", tc.types, got, tc.want)
		}
	}
}
