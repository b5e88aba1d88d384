package etl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

// runningRun is a TransformRun an hour old, running on two nodes, with one failed object on
// node-a.
func runningRun() *v1alpha1.TransformRun {
	seen := metav1.NewTime(clitest.Now.Add(-10 * time.Second))
	return &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: "r1", Namespace: "default", UID: "uid1", CreationTimestamp: metav1.NewTime(clitest.Now.Add(-time.Hour))},
		Spec: v1alpha1.TransformRunSpec{Transform: "md5", Source: v1alpha1.RunSource{Prefix: "raw"},
			Destination: v1alpha1.RunDestination{Prefix: "out"}, ContinueOnError: true},
		Status: v1alpha1.TransformRunStatus{
			Phase: v1alpha1.RunRunning, Progress: "5/10", Rate: "2 obj/s, 1.0 MB/s", ETA: "3s",
			Totals: v1alpha1.RunCounts{PlannedObjects: 10, PlannedBytes: 10240, DoneObjects: 4, DoneBytes: 4096, SkippedObjects: 1, FailedObjects: 1},
			Nodes: []v1alpha1.RunNodeStatus{
				{Node: "node-a", Phase: v1alpha1.RunRunning, LastSeen: &seen, ObjectsPerSecond: 1, BytesPerSecond: 600000, RunCounts: v1alpha1.RunCounts{PlannedObjects: 6, PlannedBytes: 6144, DoneObjects: 3, DoneBytes: 3072, FailedObjects: 1}},
				{Node: "node-b", Phase: v1alpha1.RunRunning, LastSeen: &seen, ObjectsPerSecond: 2, BytesPerSecond: 400000, RunCounts: v1alpha1.RunCounts{PlannedObjects: 4, PlannedBytes: 4096, DoneObjects: 1, DoneBytes: 1024, SkippedObjects: 1}},
			},
			Errors:        []v1alpha1.ObjectError{{Object: "raw/x", Message: "boom", StatusCode: 500, Node: "node-a", Time: metav1.NewTime(clitest.Now.Add(-time.Minute))}},
			ErrorManifest: "mlkube-errors-uid1.jsonl",
		},
	}
}

// withPhase is runningRun in phase p on every node, with conditions saying so.
func withPhase(p v1alpha1.RunPhase) *v1alpha1.TransformRun {
	r := runningRun()
	r.Status.Phase, r.Status.ETA = p, ""
	for i := range r.Status.Nodes {
		n := &r.Status.Nodes[i]
		n.Phase = p
		if p != v1alpha1.RunRunning {
			n.ObjectsPerSecond, n.BytesPerSecond = 0, 0 // as the manager writes it
		}
	}
	if p == v1alpha1.RunFailed {
		r.Status.Conditions = []metav1.Condition{{Type: "Failed", Status: "True", Reason: "ObjectsFailed", Message: "1 of 10 objects failed",
			LastTransitionTime: metav1.NewTime(clitest.Now.Add(-time.Minute))}}
	}
	return r
}

// runsCase is a testCase whose watch serves changes, and whose hook runs when the command
// watches (to step the clock, or to interrupt it).
type runsCase struct {
	testCase
	changes []*v1alpha1.TransformRun
	onWatch func(env *clitest.Env)
}

func runRunsCases(t *testing.T, agent string, cases map[string]runsCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var env *clitest.Env
			funcs := tc.intercept
			if funcs.Watch == nil {
				funcs.Watch = func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
					w := watch.NewFakeWithChanSize(len(tc.changes), false)
					for _, r := range tc.changes {
						w.Modify(r)
					}
					if tc.onWatch != nil {
						tc.onWatch(env)
					}
					return w, nil
				}
			}
			b := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(tc.objs...).WithInterceptorFuncs(funcs)
			env = clitest.NewEnvWith(b, tc.kube...)
			dp := func() (TokenIssuer, AgentForwarder, *http.Client, error) {
				return stubDataPath{agent}, stubDataPath{agent}, http.DefaultClient, nil
			}
			code := env.Run(cli.NewRoot(Plugin, env.Env, commands(env.Env, dp)...), tc.args...)
			if os.Getenv("RUNS_GOLDEN") != "" {
				fmt.Printf("GOLDEN\t%s\t%q\t%q\t%d\n", name, env.Stdout.String(), env.Stderr.String(), code)
			}
			env.Check(t, code, tc.wantCode, tc.wantOut, tc.wantErr)
		})
	}
}

// interrupt sends the test process the Ctrl-C of a terminal: the command's context, from
// signal.NotifyContext, ends, and the process goes on.
func interrupt(*clitest.Env) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		panic(err)
	}
}

func TestRunCreate(t *testing.T) {
	runRunsCases(t, "", map[string]runsCase{
		"every spec field, client dry run as YAML": {testCase: testCase{
			args: []string{"run", "to-wav", "--template", "audio/clip-{0..2}.flac", "--ext", "{flac:wav}", "--dst", "wav",
				"--node-selector", "disk=ssd", "--ttl", "1h", "--overwrite", "--suspend", "--continue-on-error", "--workers-per-node", "2", "--args", "16k",
				"--run-name", "w1", "--dry-run=client", "-o", "yaml"},
			wantOut: "apiVersion: etl.mlkube.io/v1alpha1\nkind: TransformRun\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  args: 16k\n  continueOnError: true\n  destination:\n    prefix: wav\n    toExtension: .wav\n  nodeSelector:\n    disk: ssd\n  overwrite: true\n  source:\n    extension: .flac\n    template: audio/clip-{0..2}.flac\n  suspend: true\n  transform: to-wav\n  ttlSecondsAfterFinished: 3600\n  workersPerNode: 2\nstatus:\n  totals: {}\n"}},
		"a list of objects, server dry run": {testCase: testCase{
			args:    []string{"run", "md5", "--list", "a.txt,b.txt", "--list", "c.txt", "--ext", ".txt", "--dst", "out", "--run-name", "r1", "--dry-run=server"},
			wantOut: "transformrun.etl.mlkube.io/r1 created (server dry run)\n"}},
		"a bare --dry-run, once a counting run, points at --plan": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--dry-run"}, wantCode: 1, wantErr: "error: --dry-run takes a value, as kubectl's: --dry-run=client or --dry-run=server; to count what the run would transform, use --plan; see 'kubectl etl run --help'\n"}},
		"two sources": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--list", "a", "--dst", "out"}, wantCode: 1, wantErr: "error: name the source with exactly one of --src, --list and --template; see 'kubectl etl run --help'\n"}},
		"no destination": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw"}, wantCode: 1, wantErr: "error: --dst is required; see 'kubectl etl run --help'\n"}},
		"a TTL in fractions of a second": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--ttl", "1500ms"}, wantCode: 1, wantErr: "error: --ttl must be whole seconds between 0 and 720h0m0s, not 1.5s; see 'kubectl etl run --help'\n"}},
		"--timeout without --wait": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--timeout", "1m"}, wantCode: 1, wantErr: "error: --timeout bounds --wait or --plan; add one of them; see 'kubectl etl run --help'\n"}},
		"an extension of a dot only": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--ext", ".:.wav"}, wantCode: 1, wantErr: "error: --ext \".:.wav\": want EXT or EXT:NEW, e.g. .flac or .flac:.wav; see 'kubectl etl run --help'\n"}},
		"a check, client dry run as YAML: every object, none written": {testCase: testCase{
			args:    []string{"run", "md5", "--src", "raw", "--dst", "out", "--check", "--run-name", "c1", "--dry-run=client", "-o", "yaml"},
			wantOut: "apiVersion: etl.mlkube.io/v1alpha1\nkind: TransformRun\nmetadata:\n  name: c1\n  namespace: default\nspec:\n  check: true\n  continueOnError: true\n  destination:\n    prefix: out\n  source:\n    prefix: raw\n  transform: md5\nstatus:\n  totals: {}\n"}},
		"check and plan": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--check", "--plan"}, wantCode: 1, wantErr: "error: --check transforms every object, --plan transforms none; choose one; see 'kubectl etl run --help'\n"}},
		"check and overwrite": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--check", "--overwrite"}, wantCode: 1, wantErr: "error: --check writes no result, so --overwrite has nothing to replace; drop it; see 'kubectl etl run --help'\n"}},
		"an unknown output": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "-o", "wide"}, wantCode: 1, wantErr: "error: --output must be one of json, yaml, name, not \"wide\"; see 'kubectl etl run --help'\n"}},
		"plan: objects and bytes per node": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--plan"}, wantOut: "transformrun.etl.mlkube.io/r1 created\nNODE     OBJECTS   BYTES\nnode-a   6         6.0KiB\nnode-b   4         4.0KiB\nTOTAL    10        10.0KiB\n"},
			changes: []*v1alpha1.TransformRun{withPhase(v1alpha1.RunRunning), withPhase(v1alpha1.RunSucceeded)}},
		"wait, then Ctrl-C: the run goes on": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--wait"}, wantCode: cli.ExitUnknown,
			wantOut: "transformrun.etl.mlkube.io/r1 created\nPending 0/0 objects\n", wantErr: "error: detached; the run goes on: kubectl etl runs follow r1\n"}, onWatch: interrupt},
		"wait past --timeout": {testCase: testCase{
			args: []string{"run", "md5", "--src", "raw", "--dst", "out", "--run-name", "r1", "--wait", "--timeout", "10m"}, wantCode: cli.ExitTimeout,
			wantOut: "transformrun.etl.mlkube.io/r1 created\nPending 0/0 objects\n", wantErr: "error: timed out after 10m0s waiting for transformrun/r1 to be finished (it is Pending); wait longer with --timeout, or follow it: kubectl etl runs follow r1\n"}, onWatch: func(env *clitest.Env) { env.Clock.Step(10 * time.Minute) }},
	})
}

func TestRunsCommands(t *testing.T) {
	suspended := withPhase(v1alpha1.RunSuspended)
	suspended.Spec.Suspend = true
	r2 := withPhase(v1alpha1.RunSucceeded)
	r2.Name = "r2"
	runRunsCases(t, "", map[string]runsCase{
		"list":                      {testCase: testCase{args: []string{"runs", "list"}, objs: []client.Object{runningRun(), r2}, wantOut: "NAME   TRANSFORM   PHASE       PROGRESS   FAILED   RATE                AGE\nr1     md5         Running     5/10       1        2 obj/s, 1.0 MB/s   60m\nr2     md5         Succeeded   5/10       1        2 obj/s, 1.0 MB/s   60m\n"}},
		"list wide, all namespaces": {testCase: testCase{args: []string{"runs", "list", "-A", "-o", "wide"}, objs: []client.Object{runningRun()}, wantOut: "NAMESPACE   NAME   TRANSFORM   PHASE     PROGRESS   FAILED   RATE                AGE   ETA   SOURCE   DESTINATION\ndefault     r1     md5         Running   5/10       1        2 obj/s, 1.0 MB/s   60m   3s    raw/     out\n"}},
		"list, none":                {testCase: testCase{args: []string{"runs", "list"}, wantErr: "No transformruns found in namespace default.\n"}},
		"get by name":               {testCase: testCase{args: []string{"runs", "get", "r1", "-o", "name"}, objs: []client.Object{runningRun()}, wantOut: "transformrun.etl.mlkube.io/r1\n"}},
		"get without a name":        {testCase: testCase{args: []string{"runs", "get"}, wantCode: 1, wantErr: "error: NAME is required; to list every run: kubectl etl runs list; see 'kubectl etl runs get --help'\n"}},
		"get with a name and -A":    {testCase: testCase{args: []string{"runs", "get", "r1", "-A"}, wantCode: 1, wantErr: "error: a resource cannot be retrieved by name across all namespaces; see 'kubectl etl runs get --help'\n"}},
		"describe":                  {testCase: testCase{args: []string{"runs", "describe", "r1"}, objs: []client.Object{runningRun()}, wantOut: "Name:             r1\nNamespace:        default\nCreated:          2026-05-01T11:00:00Z (60m ago)\nTransform:        md5\nSource:           raw/\nDestination:      out/\nOptions:          workers=4 continue-on-error\nPhase:            Running\nProgress:         5/10 objects, 4.0KiB/10.0KiB, 1 done by an earlier attempt, 1 failed\nRate:             2 obj/s, 1.0 MB/s\nETA:              3s\nError Manifest:   out/mlkube-errors-uid1.jsonl on each node with failures; all of them: kubectl etl runs errors r1\nNodes:\n  NODE     PHASE     DONE   SKIPPED   FAILED   PLANNED   BYTES           RATE                ETA   LAST SEEN   MESSAGE\n  node-a   Running   3      0         1        6         3.0KiB/6.0KiB   1 obj/s, 0.6 MB/s   2s    10s         \n  node-b   Running   1      1         0        4         1.0KiB/4.0KiB   2 obj/s, 0.4 MB/s   1s    10s         \nConditions:   <none>\nRecent Errors:\n  NODE     OBJECT   CODE   AGE   MESSAGE\n  node-a   raw/x    500    60s   boom\nEvents:   <none>\n"}},
		"describe a failed run, with its events and not another's": {testCase: testCase{args: []string{"runs", "describe", "r1"}, objs: []client.Object{withPhase(v1alpha1.RunFailed)},
			kube: []runtime.Object{
				&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "r1.2", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Kind: "TransformRun", Name: "r1"},
					Type: "Warning", Reason: "ObjectsFailed", Message: "1 of 10 objects failed", LastTimestamp: metav1.NewTime(clitest.Now.Add(-time.Minute))},
				&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "r1.1", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Kind: "TransformRun", Name: "r1"},
					Type: "Normal", Reason: "Started", Message: "on 2 nodes", LastTimestamp: metav1.NewTime(clitest.Now.Add(-time.Hour))},
				&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "md5.1", Namespace: "default"}, InvolvedObject: corev1.ObjectReference{Kind: "Transform", Name: "r1"},
					Type: "Normal", Reason: "Ready", Message: "a Transform's", LastTimestamp: metav1.NewTime(clitest.Now.Add(-time.Hour))},
			},
			wantOut: "Name:             r1\nNamespace:        default\nCreated:          2026-05-01T11:00:00Z (60m ago)\nTransform:        md5\nSource:           raw/\nDestination:      out/\nOptions:          workers=4 continue-on-error\nPhase:            Failed\nProgress:         5/10 objects, 4.0KiB/10.0KiB, 1 done by an earlier attempt, 1 failed\nRate:             2 obj/s, 1.0 MB/s\nETA:              <none>\nError Manifest:   out/mlkube-errors-uid1.jsonl on each node with failures; all of them: kubectl etl runs errors r1\nNodes:\n  NODE     PHASE    DONE   SKIPPED   FAILED   PLANNED   BYTES           RATE     ETA      LAST SEEN   MESSAGE\n  node-a   Failed   3      0         1        6         3.0KiB/6.0KiB   <none>   <none>   10s         \n  node-b   Failed   1      1         0        4         1.0KiB/4.0KiB   <none>   <none>   10s         \nConditions:\n  TYPE     STATUS   REASON          AGE   MESSAGE\n  Failed   True     ObjectsFailed   60s   1 of 10 objects failed\nRecent Errors:\n  NODE     OBJECT   CODE   AGE   MESSAGE\n  node-a   raw/x    500    60s   boom\nEvents:\n  TYPE      REASON          AGE   MESSAGE\n  Normal    Started         60m   on 2 nodes\n  Warning   ObjectsFailed   60s   1 of 10 objects failed\n"}},
		"follow to success": {testCase: testCase{args: []string{"runs", "follow", "r1"}, objs: []client.Object{runningRun()}, wantOut: "Running 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s, ETA 3s\nSucceeded 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s\n"},
			changes: []*v1alpha1.TransformRun{withPhase(v1alpha1.RunSucceeded)}},
		"follow to failure": {testCase: testCase{args: []string{"runs", "follow", "r1"}, objs: []client.Object{runningRun()}, wantCode: cli.ExitFailed, wantOut: "Running 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s, ETA 3s\nFailed 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s\n", wantErr: "NODE     OBJECT   CODE   AGE   MESSAGE\nnode-a   raw/x    500    60s   boom\nerror: TransformRun r1 failed: 1 of 10 objects failed; every failed object: kubectl etl runs errors r1\n"},
			changes: []*v1alpha1.TransformRun{withPhase(v1alpha1.RunFailed)}},
		"follow, then Ctrl-C": {testCase: testCase{args: []string{"runs", "follow", "r1"}, objs: []client.Object{runningRun()}, wantCode: cli.ExitUnknown, wantOut: "Running 5/10 objects, 1 failed, 2 obj/s, 1.0 MB/s, ETA 3s\n", wantErr: "error: detached; the run goes on: kubectl etl runs follow r1\n"},
			onWatch: interrupt},
		"wait for success": {testCase: testCase{args: []string{"runs", "wait", "r1"}, objs: []client.Object{runningRun()}, wantOut: "transformrun.etl.mlkube.io/r1 Succeeded\n"},
			changes: []*v1alpha1.TransformRun{withPhase(v1alpha1.RunSucceeded)}},
		"wait for success, it failed": {testCase: testCase{args: []string{"runs", "wait", "r1"}, objs: []client.Object{runningRun()}, wantCode: cli.ExitFailed, wantErr: "error: TransformRun r1 ended Failed, not Succeeded: 1 of 10 objects failed; every failed object: kubectl etl runs errors r1\n"},
			changes: []*v1alpha1.TransformRun{withPhase(v1alpha1.RunFailed)}},
		"wait for suspension": {testCase: testCase{args: []string{"runs", "wait", "r1", "--for", "Suspended"}, objs: []client.Object{suspended}, wantOut: "transformrun.etl.mlkube.io/r1 Suspended\n"}},
		"wait times out": {testCase: testCase{args: []string{"runs", "wait", "r1", "--timeout", "1m"}, objs: []client.Object{runningRun()}, wantCode: cli.ExitTimeout, wantErr: "error: timed out after 1m0s waiting for transformrun/r1 to be Succeeded (it is Running); wait longer with --timeout, or follow it: kubectl etl runs follow r1\n"},
			onWatch: func(env *clitest.Env) { env.Clock.Step(time.Minute) }},
		"wait for a run that is not there": {testCase: testCase{args: []string{"runs", "wait", "nope"}, wantCode: 3, wantErr: "error: transformruns.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl runs list' (-A for all namespaces)\n"}},
		"wait for no phase":                {testCase: testCase{args: []string{"runs", "wait", "r1", "--for", "Done"}, wantCode: 1, wantErr: "error: --for \"Done\" is not a phase; use Succeeded, Failed, Running, Suspended; see 'kubectl etl runs wait --help'\n"}},
		"suspend":                          {testCase: testCase{args: []string{"runs", "suspend", "r1"}, objs: []client.Object{runningRun()}, wantOut: "transformrun.etl.mlkube.io/r1 suspended\n"}},
		"suspend, already":                 {testCase: testCase{args: []string{"runs", "suspend", "r1"}, objs: []client.Object{suspended}, wantOut: "transformrun.etl.mlkube.io/r1 already suspended\n"}},
		"resume":                           {testCase: testCase{args: []string{"runs", "resume", "r1"}, objs: []client.Object{suspended}, wantOut: "transformrun.etl.mlkube.io/r1 resumed\n"}},
		"resume a finished run":            {testCase: testCase{args: []string{"runs", "resume", "r2"}, objs: []client.Object{r2}, wantCode: 1, wantErr: "error: TransformRun r2 already Succeeded; there is nothing to resume\n"}},
		"delete":                           {testCase: testCase{args: []string{"runs", "delete", "r1", "r2"}, objs: []client.Object{runningRun(), r2}, wantOut: "transformrun.etl.mlkube.io \"r1\" deleted\ntransformrun.etl.mlkube.io \"r2\" deleted\n"}},
		"delete --all":                     {testCase: testCase{args: []string{"runs", "delete", "--all"}, objs: []client.Object{runningRun(), r2}, wantOut: "transformrun.etl.mlkube.io \"r1\" deleted\ntransformrun.etl.mlkube.io \"r2\" deleted\n"}},
		"delete one not there":             {testCase: testCase{args: []string{"runs", "delete", "nope", "r1"}, objs: []client.Object{runningRun()}, wantCode: 3, wantOut: "transformrun.etl.mlkube.io \"r1\" deleted\n", wantErr: "error: transformruns.etl.mlkube.io \"nope\" not found; see what there is with 'kubectl etl runs list' (-A for all namespaces)\n"}},
		"delete one not there, ignored":    {testCase: testCase{args: []string{"runs", "delete", "nope", "r1", "--ignore-not-found"}, objs: []client.Object{runningRun()}, wantOut: "transformrun.etl.mlkube.io \"r1\" deleted\n"}},
		"delete names and --all":           {testCase: testCase{args: []string{"runs", "delete", "r1", "--all"}, wantCode: 1, wantErr: "error: name runs or pass --all, not both; see 'kubectl etl runs delete --help'\n"}},
	})
}

// TestRunsErrors: node-a's manifest read from its node, node-b's share not over yet.
func TestRunsErrors(t *testing.T) {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/objects/default/out/mlkube-errors-uid1.jsonl" || r.Header.Get("Authorization") != "Bearer token-of-default:mlkube-cli" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		switch r.URL.Query().Get("node") {
		case "node-a":
			fmt.Fprint(w, `{"object":"raw/x","message":"boom","statusCode":500,"time":"2026-05-01T11:59:00Z"}`+"\n"+
				`{"object":"raw/y","message":"not a tar","statusCode":422,"node":"node-a","time":"2026-05-01T11:58:00Z"}`+"\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer agent.Close()
	bothFailed := withPhase(v1alpha1.RunRunning)
	bothFailed.Status.Nodes[0].Phase = v1alpha1.RunSucceeded
	bothFailed.Status.Nodes[1].FailedObjects = 1
	bothFailed.Status.Errors = append(bothFailed.Status.Errors, v1alpha1.ObjectError{Object: "raw/z", Message: "timeout", StatusCode: 504, Node: "node-b", Time: metav1.NewTime(clitest.Now.Add(-30 * time.Second))})
	forbidden := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "default may not get objects", http.StatusForbidden)
	}))
	defer forbidden.Close()
	runRunsCases(t, agent.URL, map[string]runsCase{
		"a manifest and the recent errors of a node still running": {testCase: testCase{
			args: []string{"runs", "errors", "r1"}, objs: []client.Object{bothFailed}, wantOut: "NODE     OBJECT   CODE   AGE   MESSAGE\nnode-a   raw/y    422    2m    not a tar\nnode-a   raw/x    500    60s   boom\nnode-b   raw/z    504    30s   timeout\n", wantErr: "Node node-b has no error manifest yet (its share is Running): of its 1 failed objects, the 1 recent ones the run's status keeps are listed.\n"}},
		"as JSON": {testCase: testCase{
			args: []string{"runs", "errors", "r1", "-o", "json"}, objs: []client.Object{runningRun()}, wantOut: "[\n  {\n    \"object\": \"raw/y\",\n    \"message\": \"not a tar\",\n    \"statusCode\": 422,\n    \"node\": \"node-a\",\n    \"time\": \"2026-05-01T11:58:00Z\"\n  },\n  {\n    \"object\": \"raw/x\",\n    \"message\": \"boom\",\n    \"statusCode\": 500,\n    \"node\": \"node-a\",\n    \"time\": \"2026-05-01T11:59:00Z\"\n  }\n]\n"}},
		"no failures": {testCase: testCase{
			args: []string{"runs", "errors", "r2"}, objs: []client.Object{func() client.Object {
				r := withPhase(v1alpha1.RunSucceeded)
				r.Name, r.Status.Errors, r.Status.Totals.FailedObjects, r.Status.Nodes[0].FailedObjects = "r2", nil, 0, 0
				return r
			}()}, wantErr: "No failed objects recorded for TransformRun r2.\n"}},
	})
	runRunsCases(t, forbidden.URL, map[string]runsCase{
		"a ServiceAccount that may not read": {testCase: testCase{
			args: []string{"runs", "errors", "r1"}, objs: []client.Object{runningRun()}, wantCode: 1, wantErr: "error: reading the error manifest of node node-a: ServiceAccount default:mlkube-cli may not get objects in namespace default (403: default may not get objects); bind it to mlkube-datapath-viewer: kubectl -n default create rolebinding mlkube-cli-datapath-get --clusterrole=mlkube-datapath-viewer --serviceaccount=default:mlkube-cli (docs/datapath-rbac.md), or pass --service-account\n"}},
	})
}
