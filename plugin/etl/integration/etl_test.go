// Package integration runs kubectl-etl against a real API server (envtest: kube-apiserver and etcd
// with mlkube's CRDs), through kubectl's own ConfigFlags, as a user's kubeconfig would.
package integration

import (
	"context"
	"fmt"
	"os"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/etl"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

var (
	server *clitest.APIServer
	k8s    client.Client
)

func TestMain(m *testing.M) {
	os.Exit(clitest.RunWithAPIServer(m, etl.NewScheme(), func(s *clitest.APIServer) { server, k8s = s, s.Client }))
}

const transforms = `apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata: {name: md5}
spec:
  runtime: {image: mlkube/transformer-md5:dev}
---
apiVersion: etl.mlkube.io/v1alpha1
kind: Transform
metadata: {name: upper}
spec:
  runtime: {image: mlkube/transformer-upper:dev}
`

// TestInitShowStopStartRunRm: a Transform's life through kubectl etl against the real API server;
// each step's output exact and its effect read back from the server.
func TestInitShowStopStartRunRm(t *testing.T) {
	ctx := context.Background()
	const ns = "etl"
	server.CreateNamespace(t, ns)
	cache := t.TempDir()
	md5 := func() *v1alpha1.Transform {
		t.Helper()
		var tr v1alpha1.Transform
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "md5"}, &tr); err != nil {
			t.Fatal(err)
		}
		return &tr
	}
	for _, step := range []struct {
		args    []string
		stdin   string
		wantOut string
		check   func() error
	}{
		{args: []string{"init", "-f", "-", "-n", ns}, stdin: transforms,
			wantOut: "transform.etl.mlkube.io/md5 created\ntransform.etl.mlkube.io/upper created\n"},
		{args: []string{"show", "-n", ns, "-o", "name"}, wantOut: "transform.etl.mlkube.io/md5\ntransform.etl.mlkube.io/upper\n"},
		{args: []string{"stop", "md5", "-n", ns}, wantOut: "transform.etl.mlkube.io/md5 stopped\n",
			check: func() error { return want(md5().Spec.Stopped, true, "spec.stopped") }},
		{args: []string{"start", "md5", "-n", ns}, wantOut: "transform.etl.mlkube.io/md5 started\n",
			check: func() error { return want(md5().Spec.Stopped, false, "spec.stopped") }},
		{args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--workers", "8", "-n", ns},
			wantOut: "transformrun.etl.mlkube.io/r1 created\n",
			check: func() error {
				var r v1alpha1.TransformRun
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "r1"}, &r); err != nil {
					return err
				}
				s := r.Spec
				if s.Transform != "md5" || s.Source.Prefix != "raw" || s.Destination.Prefix != "out" || s.WorkersPerNode == nil || *s.WorkersPerNode != 8 {
					return fmt.Errorf("stored run spec %+v, want md5 over raw into out with 8 workers", s)
				}
				return nil
			}},
		{args: []string{"rm", "md5", "upper", "-n", ns},
			wantOut: "transform.etl.mlkube.io \"md5\" deleted\ntransform.etl.mlkube.io \"upper\" deleted\n",
			check: func() error {
				err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "upper"}, &v1alpha1.Transform{})
				if !apierrors.IsNotFound(err) {
					return fmt.Errorf("upper after rm: %w, want not found", err)
				}
				return nil
			}},
	} {
		out, errOut, code := server.Run(t, etl.NewRoot, cache, step.stdin, step.args...)
		if code != 0 || out != step.wantOut {
			t.Fatalf("kubectl etl %v: exit %d\nstdout %q\nwant   %q\nstderr %s", step.args, code, out, step.wantOut, errOut)
		}
		if step.check != nil {
			if err := step.check(); err != nil {
				t.Fatalf("after kubectl etl %v: %v", step.args, err)
			}
		}
	}
}

func want[T comparable](got, want T, what string) error {
	if got != want {
		return fmt.Errorf("%s = %v, want %v", what, got, want)
	}
	return nil
}

// TestVocabularyAndExitCodes: kubectl's verbs and the exit codes of the frame against the real
// API server: 3 for a Transform that is not there, 1 for a usage mistake.
func TestVocabularyAndExitCodes(t *testing.T) {
	const ns = "vocabulary"
	server.CreateNamespace(t, ns)
	cache := t.TempDir()
	for _, step := range []struct {
		args             []string
		stdin            string
		wantOut, wantErr string
		wantCode         int
	}{
		{args: []string{"init", "-f", "-", "-n", ns}, stdin: transforms,
			wantOut: "transform.etl.mlkube.io/md5 created\ntransform.etl.mlkube.io/upper created\n"},
		{args: []string{"get", "md5", "-n", ns, "-o", "name"}, wantOut: "transform.etl.mlkube.io/md5\n"},
		{args: []string{"suspend", "--all", "-n", ns}, wantOut: "transform.etl.mlkube.io/md5 suspended\ntransform.etl.mlkube.io/upper suspended\n"},
		{args: []string{"resume", "md5", "-n", ns}, wantOut: "transform.etl.mlkube.io/md5 resumed\n"},
		{args: []string{"wait", "nope", "--for=Ready", "-n", ns}, wantCode: cli.ExitUnknown,
			wantErr: "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n"},
		{args: []string{"health", "nope", "-n", ns}, wantCode: cli.ExitUnknown,
			wantErr: "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n"},
		{args: []string{"get", "md5", "-A"}, wantCode: cli.ExitFailed,
			wantErr: "error: a resource cannot be retrieved by name across all namespaces; see 'kubectl etl get --help'\n"},
		{args: []string{"delete", "md5", "nope", "--ignore-not-found", "-n", ns}, wantOut: "transform.etl.mlkube.io \"md5\" deleted\n"},
	} {
		out, errOut, code := server.Run(t, etl.NewRoot, cache, step.stdin, step.args...)
		if code != step.wantCode || out != step.wantOut || errOut != step.wantErr {
			t.Errorf("kubectl etl %v: exit %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q", step.args, code, step.wantCode, out, step.wantOut, errOut, step.wantErr)
		}
	}
}
