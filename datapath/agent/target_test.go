package agent

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

func running(mutate ...func(*etlv1alpha1.Transform)) *etlv1alpha1.Transform {
	t := &etlv1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t"},
		Spec:       etlv1alpha1.TransformSpec{Communication: "ws", Argument: "fqn"},
		Status: etlv1alpha1.TransformStatus{Stage: etlv1alpha1.StageRunning, Nodes: []etlv1alpha1.NodeStatus{
			{Node: "other", Pod: "t-1", IP: "10.0.0.1", Port: 8000, Ready: true},
			{Node: testNode, Pod: "t-2", IP: "10.0.0.2", Port: 9000, Ready: true},
		}},
	}
	for _, m := range mutate {
		m(t)
	}
	return t
}

func TestTargetOf(t *testing.T) {
	cases := map[string]struct {
		transform  *etlv1alpha1.Transform
		want       Target
		notRunning bool
	}{
		"running": {
			transform: running(),
			want:      Target{Namespace: "ns", Name: "t", Communication: "ws", Argument: "fqn", ObjectTimeout: 10 * time.Second, URL: "http://10.0.0.2:9000", Pod: "t-2"},
		},
		"defaults and spellings": {
			transform: running(func(t *etlv1alpha1.Transform) {
				t.Spec.Communication, t.Spec.Argument = "hpull://", ""
				t.Spec.ObjectTimeout = &metav1.Duration{Duration: time.Minute}
				t.Status.Nodes[1].Port = 0
			}),
			want: Target{Namespace: "ns", Name: "t", Communication: "hpull", ObjectTimeout: time.Minute, URL: "http://10.0.0.2:8000", Pod: "t-2"},
		},
		"stopped":       {transform: running(func(t *etlv1alpha1.Transform) { t.Spec.Stopped = true }), notRunning: true},
		"aborted":       {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Stage = etlv1alpha1.StageAborted }), notRunning: true},
		"initializing":  {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Stage = "" }), notRunning: true},
		"not ready":     {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Nodes[1].Ready = false }), notRunning: true},
		"not on node":   {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Nodes = t.Status.Nodes[:1] }), notRunning: true},
		"unparsable IP": {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Nodes[1].IP = "10.0.0.2:80/%zz" }), notRunning: true},
		"port too big":  {transform: running(func(t *etlv1alpha1.Transform) { t.Status.Nodes[1].Port = 70000 }), notRunning: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := TargetOf(tc.transform, testNode)
			if _, ok := errors.AsType[*NotRunningError](err); ok != tc.notRunning {
				t.Fatalf("error %v, want not running: %v", err, tc.notRunning)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			// What the agent's cache keeps of a Transform must give the same answer.
			trimmed, _ := TrimTransform(testNode)(tc.transform.DeepCopy())
			gotTrimmed, errTrimmed := TargetOf(trimmed.(*etlv1alpha1.Transform), testNode)
			if diff := cmp.Diff(got, gotTrimmed); diff != "" || (err == nil) != (errTrimmed == nil) {
				t.Errorf("target of the trimmed Transform differs (-full +trimmed):\n%s\nerrors %v / %v", diff, err, errTrimmed)
			}
		})
	}
}

func TestParseTransformPath(t *testing.T) {
	cases := map[string]struct {
		path    string
		want    transformPath
		wantErr bool
	}{
		"simple":             {path: "/v1/transform/ns/t/a/b.bin", want: transformPath{"ns", []string{"t"}, "a/b.bin"}},
		"pipeline":           {path: "/v1/transform/ns/a>>b%3E%3Ec/x", want: transformPath{"ns", []string{"a", "b", "c"}, "x"}},
		"escaped object":     {path: "/v1/transform/ns/t/a%2Fb%20c%25", want: transformPath{"ns", []string{"t"}, "a/b c%"}},
		"dot-dot":            {path: "/v1/transform/ns/t/a/../b", wantErr: true},
		"escaped dot-dot":    {path: "/v1/transform/ns/t/%2E%2E", wantErr: true},
		"absolute":           {path: "/v1/transform/ns/t//etc/passwd", wantErr: true},
		"no object":          {path: "/v1/transform/ns/t/", wantErr: true},
		"no name":            {path: "/v1/transform/ns", wantErr: true},
		"empty stage":        {path: "/v1/transform/ns/a>>/x", wantErr: true},
		"eight stages":       {path: "/v1/transform/ns/a" + strings.Repeat(">>a", wire.MaxPipelineStages-1) + "/x", want: transformPath{"ns", slices.Repeat([]string{"a"}, wire.MaxPipelineStages), "x"}},
		"slash in namespace": {path: "/v1/transform/a%2Fb/t/x", wantErr: true},
		"nine stages":        {path: "/v1/transform/ns/a" + strings.Repeat(">>a", wire.MaxPipelineStages) + "/x", wantErr: true},
		"long object":        {path: "/v1/transform/ns/t/" + strings.Repeat("o", 1025), wantErr: true},
		"NUL":                {path: "/v1/transform/ns/t/a%00", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := parseTransformPath(tc.path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(transformPath{})); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
		})
	}
}

// A path made of separators is refused without a stage allocated for each of them: what it
// costs is bounded by the path's own size (the unescaped copy), not by its stage count.
func TestParseTransformPathBoundsAllocation(t *testing.T) {
	path := "/v1/transform/ns/" + strings.Repeat(wire.PipelineSeparator, 1<<17) + "/x"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := parseTransformPath(path)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a pipeline of 2^17 stages was accepted")
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(2*len(path)) {
		t.Errorf("refusing a %d-byte path allocated %d bytes; want at most twice the path", len(path), got)
	}
}

// The cache keeps none of what the agent does not read: code, templates, recorded errors, other
// nodes' entries.
func TestTrimTransformDropsWhatTheAgentDoesNotRead(t *testing.T) {
	tr := running(func(t *etlv1alpha1.Transform) {
		t.Spec.Code = &etlv1alpha1.CodeSpec{Runtime: "python3.11", Source: strings.Repeat("x", 1<<20)}
		t.Spec.Env = []corev1.EnvVar{{Name: "K", Value: "V"}}
		t.Status.Errors = make([]etlv1alpha1.ObjectError, etlv1alpha1.MaxObjectErrors)
		t.Status.Nodes[1].Counters = etlv1alpha1.Counters{Objects: 7}
		t.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		t.Annotations = map[string]string{"a": "b"}
		t.ResourceVersion = "42"
		t.UID = "uid-1"
		t.Status.Nodes[1].TokenKey = "k3"
	})
	got, err := TrimTransform(testNode)(tr)
	if err != nil {
		t.Fatal(err)
	}
	want := &etlv1alpha1.Transform{
		// The UID and the node's token key are what the agent derives the credential from.
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t", ResourceVersion: "42", UID: "uid-1"},
		Spec:       etlv1alpha1.TransformSpec{Communication: "ws", Argument: "fqn"},
		Status: etlv1alpha1.TransformStatus{Stage: etlv1alpha1.StageRunning, Nodes: []etlv1alpha1.NodeStatus{
			{Node: testNode, Pod: "t-2", IP: "10.0.0.2", Port: 9000, Ready: true, TokenKey: "k3"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed (-want +got):\n%s", diff)
	}
	if other, _ := TrimTransform(testNode)(&corev1.Pod{}); other == nil {
		t.Error("an object of another type must pass through unchanged")
	}
}
