package etl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// runIndexed is run with events indexed by involvedObject.name, which describe selects on.
func runIndexed(t *testing.T, tc testCase) {
	t.Helper()
	b := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(tc.objs...).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string {
			return []string{o.(*corev1.Event).InvolvedObject.Name}
		})
	env := clitest.NewEnvWith(b)
	code := env.Run(NewRoot(env.Env), tc.args...)
	env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
}

func TestVocabulary(t *testing.T) {
	running := md5()
	running.Status.Stage = v1alpha1.StageRunning
	running.Status.Nodes = running.Status.Nodes[:1]
	aborted := md5()
	aborted.Status.Stage, aborted.Status.Reason = v1alpha1.StageAborted, "transformer pod failed"
	runCases(t, map[string]testCase{
		"get": {
			args: []string{"get", "md5", "-o", "name"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5\n",
		},
		"show is get": {
			args: []string{"show", "md5", "-o", "name"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5\n",
		},
		"AIStore's show errors NAME": {
			args: []string{"show", "errors", "md5"}, objs: []client.Object{md5()},
			wantErr:  "error: \"errors\" is not a Transform here: AIStore's 'show errors NAME' is 'kubectl etl errors NAME'; see 'kubectl etl get --help'\n",
			wantCode: 1,
		},
		"AIStore's show details NAME": {
			args: []string{"show", "details", "md5"}, objs: []client.Object{md5()},
			wantErr:  "error: \"details\" is not a Transform here: AIStore's 'show details NAME' is 'kubectl etl describe NAME'; see 'kubectl etl get --help'\n",
			wantCode: 1,
		},
		"get a name across all namespaces": {
			args:     []string{"get", "md5", "-A"},
			wantErr:  "error: a resource cannot be retrieved by name across all namespaces; see 'kubectl etl get --help'\n",
			wantCode: 1,
		},
		"suspend": {
			args: []string{"suspend", "md5"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5 suspended\n",
		},
		"stop is suspend, and says stopped": {
			args: []string{"stop", "md5"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5 stopped\n",
		},
		"resume": {
			args: []string{"resume", "md5"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io/md5 resumed\n",
		},
		"delete ignoring a missing one": {
			args: []string{"delete", "nope", "md5", "--ignore-not-found"}, objs: []client.Object{md5()},
			wantOut: "transform.etl.mlkube.io \"md5\" deleted\n",
		},
		"delete a missing one": {
			args:     []string{"delete", "nope"},
			wantErr:  "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"top of a missing Transform": {
			args:     []string{"top", "nope"},
			wantErr:  "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"health of a missing Transform is exit 3": {
			args:     []string{"health", "nope"},
			wantErr:  "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"wait for Ready": {
			args: []string{"wait", "md5", "--for=Ready"}, objs: []client.Object{running},
			wantOut: "transform.etl.mlkube.io/md5 Ready\n",
		},
		"wait for an aborted Transform": {
			args: []string{"wait", "md5", "--for=Ready"}, objs: []client.Object{aborted},
			wantErr:  "error: transform/md5 is Aborted, not Ready: transformer pod failed; see 'kubectl etl describe md5'\n",
			wantCode: cli.ExitFailed,
		},
		"wait for a missing Transform": {
			args:     []string{"wait", "nope", "--for=Stopped"},
			wantErr:  "error: transforms.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"wait for no stage": {
			args:     []string{"wait", "md5", "--for=Done"},
			wantErr:  "error: --for \"Done\" is not a stage; use Ready, Running, Stopped, Aborted, Initializing; see 'kubectl etl wait --help'\n",
			wantCode: 1,
		},
		"unknown command suggests no destructive verb": {
			args:     []string{"tpo", "md5"},
			wantErr:  "error: unknown command \"tpo\" for \"kubectl etl\"; did you mean \"cp\" or \"top\"?; see 'kubectl etl --help'\n",
			wantCode: 1,
		},
		"a typo of stop is not answered with stop": {
			args:     []string{"spot", "md5"},
			wantErr:  "error: unknown command \"spot\" for \"kubectl etl\"; see 'kubectl etl --help'\n",
			wantCode: 1,
		},
		"logs with kubectl's flags": {
			args:    []string{"logs", "md5", "--node", "node-a", "--since", "5m", "--timestamps", "-c", "transformer", "--previous", "--tail", "3"},
			objs:    []client.Object{md5()},
			wantOut: "[node-a] fake logs\n",
		},
	})
}

// TestVersionShowsManager: the etl scheme knows apps/v1, so `version` reads the manager's
// Deployment instead of "no kind is registered for the type v1.Deployment".
func TestVersionShowsManager(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: cli.ManagerNamespace, Name: cli.ManagerDeployment},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "manager", Image: "mlkube/manager:v1"}}}}}}
	env := clitest.NewEnv(NewScheme(), []client.Object{d})
	code := env.Run(NewRoot(env.Env), "version", "-o", "yaml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, env.Stderr)
	}
	if got := env.Stdout.String(); !strings.Contains(got, "manager: mlkube/manager:v1\n") {
		t.Errorf("version -o yaml shows no manager:\n%s", got)
	}
}

func TestDescribe(t *testing.T) {
	tr := md5()
	tr.Labels = map[string]string{"team": "a"}
	waiting := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "md5-bbbb"},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			RestartCount: 2, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}}}
	ready := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "md5-aaaa"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	event := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "e1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "md5-bbbb"}, Type: "Warning", Reason: "Failed",
		Message: "Back-off pulling image \"md5\"", Source: corev1.EventSource{Component: "kubelet"}, Count: 3,
		LastTimestamp: metav1.NewTime(clitest.Now.Add(-2 * time.Minute))}
	runIndexed(t, testCase{
		args: []string{"describe", "md5"}, objs: []client.Object{tr, waiting, ready, event},
		wantOut: "" +
			"Name:            md5\n" +
			"Namespace:       default\n" +
			"Labels:          team=a\n" +
			"Created:         2026-05-01T11:00:00Z (60m ago)\n" +
			"Form:            runtime\n" +
			"Communication:   ws\n" +
			"Argument:        bytes\n" +
			"Suspended:       false\n" +
			"Stage:           Initializing\n" +
			"Nodes Ready:     1/2\n" +
			"Totals:          objects=10 in=2.0KiB out=320B errors=1\n" +
			"Nodes:\n" +
			"  NODE     POD        STATUS             READY   RESTARTS   OBJECTS   ERRORS\n" +
			"  node-a   md5-aaaa   Running            true    0          10        1\n" +
			"  node-b   md5-bbbb   ImagePullBackOff   false   2          0         0\n" +
			"Events:\n" +
			"  TYPE      REASON   AGE       FROM      MESSAGE\n" +
			"  Warning   Failed   2m (x3)   kubelet   Back-off pulling image \"md5\"\n",
	})
	runIndexed(t, testCase{
		args:     []string{"describe"},
		wantErr:  "error: NAME is required; see 'kubectl etl describe --help'\n",
		wantCode: 1,
	})
}

// TestUnreachableCluster: a kubeconfig whose server refuses connections gives one error line
// with kubectl's question and exit 3, through kubectl's own ConfigFlags.
func TestUnreachableCluster(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: default}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	flags := cli.NewConfigFlags()
	cache := t.TempDir()
	flags.CacheDir = &cache
	env := cli.NewEnv(genericiooptions.IOStreams{In: &bytes.Buffer{}, Out: &out, ErrOut: &errOut}, flags, NewScheme())
	code := cli.Execute(NewRoot(env), []string{"get", "--kubeconfig", kubeconfig})
	(&clitest.Env{Stdout: &out, Stderr: &errOut}).Check(t, code, cli.ExitUnknown, "",
		"error: Get \"http://127.0.0.1:1/api?timeout=32s\": dial tcp 127.0.0.1:1: connect: connection refused; the cluster is unreachable: did you specify the right host or port? (--server, --context or KUBECONFIG)\n")
}
