package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// TestRuns: a TransformRun's life through kubectl etl run and kubectl etl runs against the real
// API server, its status written as the controller would; each step's output and exit code
// exact and its effect read back from the server.
func TestRuns(t *testing.T) {
	ctx := context.Background()
	const ns = "etl-runs"
	server.CreateNamespace(t, ns)
	cache := t.TempDir()
	get := func(name string) (*v1alpha1.TransformRun, error) {
		var r v1alpha1.TransformRun
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &r)
		return &r, err
	}
	// finish writes the status a controller writes when the run ended in phase p.
	finish := func(p v1alpha1.RunPhase) func() error {
		return func() error {
			r, err := get("r1")
			if err != nil {
				return err
			}
			r.Status = v1alpha1.TransformRunStatus{Phase: p, Progress: "2/2",
				Totals: v1alpha1.RunCounts{PlannedObjects: 2, DoneObjects: 2, PlannedBytes: 10, DoneBytes: 10},
				Nodes:  []v1alpha1.RunNodeStatus{{Node: "node-a", Phase: p, RunCounts: v1alpha1.RunCounts{PlannedObjects: 2, DoneObjects: 2, PlannedBytes: 10, DoneBytes: 10}}}}
			return k8s.Status().Update(ctx, r)
		}
	}
	for _, step := range []struct {
		args    []string
		before  func() error
		wantOut string
		wantErr string
		code    int
		check   func() error
	}{
		{args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r0", "--dry-run=server", "-o", "name"},
			wantOut: "transformrun.etl.mlkube.io/r0\n",
			check: func() error {
				if _, err := get("r0"); !apierrors.IsNotFound(err) {
					return fmt.Errorf("r0 after a server dry run: %w, want not found", err)
				}
				return nil
			}},
		{args: []string{"run", "md5", "--template", "shard-{0..1}.tar", "--ext", ".tar:.out", "--dst", "out", "--run-name", "r1",
			"--node-selector", "disk=ssd", "--ttl", "2h", "--overwrite"},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
			check: func() error {
				r, err := get("r1")
				if err != nil {
					return err
				}
				s := r.Spec
				if s.Source.Template != "shard-{0..1}.tar" || s.Source.Extension != ".tar" || s.Destination.ToExtension != ".out" ||
					s.NodeSelector["disk"] != "ssd" || s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished != 7200 || !s.Overwrite || s.DryRun {
					return fmt.Errorf("stored run spec %+v", s)
				}
				return nil
			}},
		{args: []string{"runs", "list", "-o", "name"}, wantOut: "transformrun.etl.mlkube.io/r1\n"},
		{args: []string{"runs", "get", "r1", "-o", "jsonpath={.spec.source.template}"}, wantOut: "shard-{0..1}.tar"},
		{args: []string{"runs", "suspend", "r1"}, wantOut: "transformrun.etl.mlkube.io/r1 suspended\n",
			check: func() error { r, err := get("r1"); return firstErr(err, want(r.Spec.Suspend, true, "spec.suspend")) }},
		{args: []string{"runs", "suspend", "r1"}, wantOut: "transformrun.etl.mlkube.io/r1 already suspended\n"},
		{args: []string{"runs", "resume", "r1"}, wantOut: "transformrun.etl.mlkube.io/r1 resumed\n",
			check: func() error { r, err := get("r1"); return firstErr(err, want(r.Spec.Suspend, false, "spec.suspend")) }},
		{args: []string{"runs", "wait", "r1", "--for", "Failed"}, before: finish(v1alpha1.RunSucceeded), code: cli.ExitFailed,
			wantErr: "error: TransformRun r1 ended Succeeded, not Failed\n"},
		{args: []string{"runs", "wait", "r1"}, wantOut: "transformrun.etl.mlkube.io/r1 Succeeded\n"},
		{args: []string{"runs", "describe", "r1"}, wantOut: "Name:          r1\n"},
		{args: []string{"runs", "delete", "r1", "gone", "--ignore-not-found"}, wantOut: "transformrun.etl.mlkube.io \"r1\" deleted\n",
			check: func() error {
				if _, err := get("r1"); !apierrors.IsNotFound(err) {
					return fmt.Errorf("r1 after delete: %w, want not found", err)
				}
				return nil
			}},
		{args: []string{"runs", "wait", "r1"}, code: cli.ExitUnknown,
			wantErr: "error: transformruns.etl.mlkube.io \"r1\" not found; see what there is with 'kubectl etl runs list' (-A for all namespaces)\n"},
	} {
		if step.before != nil {
			if err := step.before(); err != nil {
				t.Fatalf("before kubectl etl %v: %v", step.args, err)
			}
		}
		args := append(step.args, "-n", ns)
		out, errOut, code := server.Run(t, etl.NewRoot, cache, "", args...)
		// describe's first line only: its ages follow the wall clock of the real API server.
		if step.args[1] == "describe" {
			out, _, _ = strings.Cut(out, "Namespace:")
		}
		if code != step.code || out != step.wantOut || errOut != step.wantErr {
			t.Fatalf("kubectl etl %v: exit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", args, code, step.code, out, step.wantOut, errOut, step.wantErr)
		}
		if step.check != nil {
			if err := step.check(); err != nil {
				t.Fatalf("after kubectl etl %v: %v", args, err)
			}
		}
	}
}

// firstErr is err, else els.
func firstErr(err, els error) error {
	if err != nil {
		return err
	}
	return els
}
