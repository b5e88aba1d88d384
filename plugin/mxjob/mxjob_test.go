package mxjob

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
	"github.com/mlkube/mlkube/plugin/internal/cli/clitest"
)

func newTestEnv(objs []client.Object, funcs *interceptor.Funcs) *clitest.Env {
	b := fake.NewClientBuilder().WithScheme(NewScheme()).WithObjects(objs...).
		WithStatusSubresource(&v1beta1.MxJob{}).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string {
			return []string{o.(*corev1.Event).InvolvedObject.Name}
		})
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return clitest.NewEnvWith(b)
}

type cmdCase struct {
	objs     []client.Object
	funcs    *interceptor.Funcs
	stdin    string
	args     []string
	wantOut  string
	wantErr  string
	wantCode int
	// check inspects the cluster after the command.
	check func(t *testing.T, c client.Client)
}

func runCases(t *testing.T, cases map[string]cmdCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			env := newTestEnv(tc.objs, tc.funcs)
			env.Stdin.WriteString(tc.stdin)
			code := env.Run(NewRoot(env.Env), tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.wantCode, env.Stderr)
			}
			if diff := cmp.Diff(tc.wantOut, env.Stdout.String()); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, env.Stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, env.Factory.Ctrl)
			}
		})
	}
}

var (
	running   = makeJob("mnist", time.Hour).state(v1beta1.StateRunning, "").active(v1beta1.ReplicaTypeWorker, 2).active(v1beta1.ReplicaTypeServer, 1).started(50 * time.Minute).obj()
	failed    = makeJob("cifar", 49*time.Hour).state(v1beta1.StateFailed, "worker-1 exited 1").obj()
	succeeded = makeJob("done", 3*time.Hour).state(v1beta1.StateSucceeded, "").obj()
	pending   = makeJob("other", 10*time.Second).ns("team").obj()
)

func TestListAndGet(t *testing.T) {
	objs := []client.Object{running, failed, pending}
	runCases(t, map[string]cmdCase{
		"list": {
			objs:    objs,
			args:    []string{"list"},
			wantOut: "NAME    MODE   STATE     QUEUE   WORKERS   RESTARTS   AGE\ncifar   dist   Failed    -       0/2       0          2d1h\nmnist   dist   Running   -       2/2       0          60m\n",
		},
		"list wide, all namespaces": {
			objs: objs,
			args: []string{"list", "-A", "-o", "wide"},
			wantOut: "NAMESPACE   NAME    MODE   STATE     QUEUE   WORKERS   RESTARTS   AGE    SERVERS   DURATION   REASON\n" +
				"default     cifar   dist   Failed    -       0/2       0          2d1h   0/1       -          worker-1 exited 1\n" +
				"default     mnist   dist   Running   -       2/2       0          60m    1/1       50m        \n" +
				"team        other   dist   Pending   -       0/2       0          10s    0/1       -          \n",
		},
		"list no headers": {
			objs:    objs,
			args:    []string{"list", "-n", "team", "--no-headers"},
			wantOut: "other   dist   Pending   -     0/2   0     10s\n",
		},
		"list names": {
			objs:    objs,
			args:    []string{"list", "-o", "name"},
			wantOut: "mxjob.mxnet.mlkube.io/cifar\nmxjob.mxnet.mlkube.io/mnist\n",
		},
		"list empty": {
			args:    []string{"list"},
			wantErr: "No mxjobs found in namespace default.\n",
		},
		"get jsonpath": {
			objs:    objs,
			args:    []string{"get", "cifar", "-o", "jsonpath={.apiVersion} {.kind} {.status.reason}"},
			wantOut: "mxnet.mlkube.io/v1beta1 MxJob worker-1 exited 1",
		},
		"get missing": {
			objs:     objs,
			args:     []string{"get", "nope"},
			wantErr:  "error: mxjobs.mxnet.mlkube.io \"nope\" not found; see what there is with 'kubectl mxjob list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"get without name lists, as kubectl get does": {
			args:    []string{"get"},
			wantErr: "No mxjobs found in namespace default.\n",
		},
		"get a name across all namespaces": {
			args:     []string{"get", "x", "-A"},
			wantErr:  "error: a resource cannot be retrieved by name across all namespaces; see 'kubectl mxjob get --help'\n",
			wantCode: 1,
		},
		"no CRD": {
			funcs: &interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "mxnet.mlkube.io", Kind: "MxJob"}, SearchedVersions: []string{"v1beta1"}}
			}},
			args:     []string{"list"},
			wantErr:  "error: no matches for kind \"MxJob\" in version \"mxnet.mlkube.io/v1beta1\"; the cluster does not serve mxnet.mlkube.io: " + cli.InstallHint + "\n",
			wantCode: cli.ExitUnknown,
		},
	})
}

// Jobs queued by Kueue, as the controller leaves them.
var (
	// waiting has never been admitted: its quota is short.
	waiting = makeJob("train", 5*time.Minute).queue("team", "high").suspended().
		admitted(metav1.ConditionFalse, v1beta1.ReasonPending, "waiting in LocalQueue team: couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default, 2 more needed").obj()
	// preempted was admitted, then evicted for a job of higher priority, and waits again.
	preempted = makeJob("low", 20*time.Minute).queue("team", "").suspended().
			admitted(metav1.ConditionFalse, "Preempted", "Preempted to accommodate a workload due to prioritization in the ClusterQueue").obj()
	// stopping was just evicted: its pods still run until the controller deletes them.
	stopping = makeJob("going", 30*time.Minute).queue("team", "").state(v1beta1.StateRunning, "").
			admitted(metav1.ConditionFalse, "Preempted", "Preempted to accommodate a workload").obj()
	// admitted runs with Kueue's admission.
	admitted = makeJob("fits", 10*time.Minute).queue("team", "").state(v1beta1.StateRunning, "").active(v1beta1.ReplicaTypeWorker, 2).started(9*time.Minute).
			admitted(metav1.ConditionTrue, v1beta1.ReasonAdmitted, "admitted by ClusterQueue team-cq").obj()
	// suspendedByHand is suspended by its user, Kueue or not: no Admitted condition.
	suspendedByHand = makeJob("paused", 3*time.Hour).suspended().obj()
)

// TestListQueued: the QUEUE column, and a job Kueue holds back is Queued with Kueue's reason,
// whether it never ran or was preempted; one admitted, still stopping or suspended by hand keeps
// its state.
func TestListQueued(t *testing.T) {
	objs := []client.Object{waiting, preempted, stopping, admitted, suspendedByHand}
	runCases(t, map[string]cmdCase{
		"list": {
			objs: objs,
			args: []string{"list"},
			wantOut: "NAME     MODE   STATE       QUEUE   WORKERS   RESTARTS   AGE\n" +
				"fits     dist   Running     team    2/2       0          10m\n" +
				"going    dist   Running     team    0/2       0          30m\n" +
				"low      dist   Queued      team    0/2       0          20m\n" +
				"paused   dist   Suspended   -       0/2       0          3h\n" +
				"train    dist   Queued      team    0/2       0          5m\n",
		},
		"wide": {
			objs: objs,
			args: []string{"list", "-o", "wide"},
			wantOut: "NAME     MODE   STATE       QUEUE   WORKERS   RESTARTS   AGE   SERVERS   DURATION   REASON\n" +
				"fits     dist   Running     team    2/2       0          10m   0/1       9m         \n" +
				"going    dist   Running     team    0/2       0          30m   0/1       -          \n" +
				"low      dist   Queued      team    0/2       0          20m   0/1       -          Preempted to accommodate a workload due to prioritization in the ClusterQueue\n" +
				"paused   dist   Suspended   -       0/2       0          3h    0/1       -          suspended by runPolicy.suspend\n" +
				"train    dist   Queued      team    0/2       0          5m    0/1       -          waiting in LocalQueue team: couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default, 2 more needed\n",
		},
		"the state is the table's, not the API's": {
			objs:    objs,
			args:    []string{"get", "train", "-o", "jsonpath={.status.state}"},
			wantOut: "Suspended",
		},
	})
}

func TestDescribe(t *testing.T) {
	job := running.DeepCopy()
	job.Labels = map[string]string{"team": "vision"}
	job.Status.Conditions = []metav1.Condition{{Type: "Running", Status: "True", Reason: "AllReplicasRunning", Message: "all 4 replicas run", LastTransitionTime: metav1.NewTime(clitest.Now.Add(-40 * time.Minute))}}
	crash := makePod("mnist", "worker", 1, "node-2", corev1.PodRunning)
	crash.Status.ContainerStatuses = []corev1.ContainerStatus{{RestartCount: 3, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: "default", Name: "mnist.1"},
		InvolvedObject: corev1.ObjectReference{Name: "mnist", Kind: "MxJob"},
		Type:           "Normal", Reason: "SuccessfulCreatePod", Message: "created pod mnist-worker-0", Count: 2,
		Source: corev1.EventSource{Component: "mxjob-controller"}, LastTimestamp: metav1.NewTime(clitest.Now.Add(-5 * time.Minute)),
	}
	objs := []client.Object{job, crash, ev,
		makePod("mnist", "worker", 0, "node-1", corev1.PodRunning),
		makePod("mnist", "scheduler", 0, "node-1", corev1.PodRunning),
		makePod("mnist", "server", 0, "node-2", corev1.PodPending)}
	runCases(t, map[string]cmdCase{
		"describe": {
			objs: objs,
			args: []string{"describe", "mnist"},
			wantOut: `Name:         mnist
Namespace:    default
Labels:       team=vision
Created:      2026-05-01T11:00:00Z (60m ago)
Mode:         dist
State:        Running
Restarts:     0
Started:      2026-05-01T11:10:00Z
Duration:     50m
Run Policy:   cleanPodPolicy=<none> backoffLimit=none activeDeadline=none ttlAfterFinished=none suspend=false
Replicas:
  TYPE        DESIRED   ACTIVE   SUCCEEDED   FAILED   IMAGE
  SCHEDULER   1         0        0           0        mxnet:1.9
  SERVER      1         1        0           0        mxnet:1.9
  WORKER      2         2        0           0        mxnet:1.9
Pods:
  NAME                REPLICA       STATUS             RESTARTS   NODE     AGE
  mnist-scheduler-0   scheduler-0   Running            0          node-1   30m
  mnist-server-0      server-0      Pending            0          node-2   30m
  mnist-worker-0      worker-0      Running            0          node-1   30m
  mnist-worker-1      worker-1      CrashLoopBackOff   3          node-2   30m
Conditions:
  TYPE      STATUS   REASON               AGE   MESSAGE
  Running   True     AllReplicasRunning   40m   all 4 replicas run
Events:
  TYPE     REASON                AGE       FROM               MESSAGE
  Normal   SuccessfulCreatePod   5m (x2)   mxjob-controller   created pod mnist-worker-0
`,
		},
		// Why a queued job waits: its queue, priority and what Kueue says.
		"queued": {
			objs: []client.Object{waiting},
			args: []string{"describe", "train"},
			wantOut: `Name:             train
Namespace:        default
Labels:           kueue.x-k8s.io/priority-class=high,kueue.x-k8s.io/queue-name=team
Created:          2026-05-01T11:55:00Z (5m ago)
Mode:             dist
State:            Queued
Reason:           suspended by runPolicy.suspend
Queue:            team
Priority Class:   high
Admitted:         False, reason Pending: waiting in LocalQueue team: couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default, 2 more needed
Restarts:         0
Run Policy:       cleanPodPolicy=<none> backoffLimit=none activeDeadline=none ttlAfterFinished=none suspend=true
Replicas:
  TYPE        DESIRED   ACTIVE   SUCCEEDED   FAILED   IMAGE
  SCHEDULER   1         0        0           0        mxnet:1.9
  SERVER      1         0        0           0        mxnet:1.9
  WORKER      2         0        0           0        mxnet:1.9
Pods:   <none>
Conditions:
  TYPE       STATUS   REASON    AGE   MESSAGE
  Admitted   False    Pending   2m    waiting in LocalQueue team: couldn't assign flavors to pod set worker: insufficient unused quota for cpu in flavor default, 2 more needed
Events:   <none>
`,
		},
	})
}

// TestDescribeKueue: the lines describe gives a job Kueue queues, whatever its admission, and
// none to a job Kueue does not queue.
func TestDescribeKueue(t *testing.T) {
	for _, tc := range []struct {
		job  *v1beta1.MxJob
		want string
	}{
		{admitted, "Queue:\tteam\nAdmitted:\tTrue, reason Admitted: admitted by ClusterQueue team-cq\n"},
		{preempted, "Queue:\tteam\nAdmitted:\tFalse, reason Preempted: Preempted to accommodate a workload due to prioritization in the ClusterQueue\n"},
		{makeJob("new", time.Second).queue("team", "high").obj(), "Queue:\tteam\nPriority Class:\thigh\n"},
		{running, ""},
	} {
		var b strings.Builder
		describeKueue(&b, tc.job)
		if diff := cmp.Diff(tc.want, b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.job.Name, diff)
		}
	}
}

func TestTop(t *testing.T) {
	usage := func(name, typ, idx, cpu, mem string) *metricsv1beta1.PodMetrics {
		return &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{v1beta1.LabelJobName: "mnist", v1beta1.LabelReplicaType: typ, v1beta1.LabelReplicaIndex: idx}},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "mxnet", Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}}},
		}
	}
	objs := []client.Object{running, usage("mnist-worker-1", "worker", "1", "1500m", "2Gi"), usage("mnist-scheduler-0", "scheduler", "0", "10m", "64Mi"), usage("mnist-worker-0", "worker", "0", "2", "2100Mi")}
	runCases(t, map[string]cmdCase{
		"top": {
			objs:    objs,
			args:    []string{"top", "mnist"},
			wantOut: "NAME                REPLICA       CPU(CORES)   MEMORY(BYTES)\nmnist-scheduler-0   scheduler-0   10m          64Mi\nmnist-worker-0      worker-0      2000m        2100Mi\nmnist-worker-1      worker-1      1500m        2048Mi\n",
		},
		"top workers": {
			objs:    objs,
			args:    []string{"top", "mnist", "--type", "WORKER", "--no-headers"},
			wantOut: "mnist-worker-0   worker-0   2000m   2100Mi\nmnist-worker-1   worker-1   1500m   2048Mi\n",
		},
		"no metrics API": {
			funcs: &interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: "metrics.k8s.io", Kind: "PodMetrics"}, SearchedVersions: []string{"v1beta1"}}
			}},
			args:     []string{"top", "mnist"},
			wantErr:  "error: the cluster serves no metrics API (metrics.k8s.io): install metrics-server to use top (no matches for kind \"PodMetrics\" in version \"metrics.k8s.io/v1beta1\")\n",
			wantCode: cli.ExitUnknown,
		},
		"no pods yet": {
			objs:     []client.Object{running},
			args:     []string{"top", "mnist"},
			wantErr:  "error: no metrics for mxjob/mnist yet: it has no running pods, or metrics-server has not sampled them (it does every 15s or so); see 'kubectl mxjob describe mnist'\n",
			wantCode: 1,
		},
		"bad type": {
			args:     []string{"top", "mnist", "--type", "tuner"},
			wantErr:  "error: --type \"tuner\" is not a replica type; use scheduler, server, worker; see 'kubectl mxjob top --help'\n",
			wantCode: 1,
		},
	})
}

func TestLogs(t *testing.T) {
	objs := []client.Object{running,
		makePod("mnist", "worker", 1, "node-2", corev1.PodRunning),
		makePod("mnist", "worker", 0, "node-1", corev1.PodRunning),
		makePod("mnist", "scheduler", 0, "node-1", corev1.PodRunning)}
	runCases(t, map[string]cmdCase{
		"all replicas": {
			objs:    objs,
			args:    []string{"logs", "mnist"},
			wantOut: "[pod/mnist-scheduler-0] fake logs\n[pod/mnist-worker-0] fake logs\n[pod/mnist-worker-1] fake logs\n",
		},
		"one worker, followed": {
			objs:    objs,
			args:    []string{"logs", "mnist", "--type", "worker", "--index", "1", "-f", "--tail", "5", "--since", "1m", "--timestamps"},
			wantOut: "[pod/mnist-worker-1] fake logs\n",
		},
		"no such replica": {
			objs:     objs,
			args:     []string{"logs", "mnist", "--type", "server"},
			wantErr:  "error: mxjob/mnist has no pods of type server; see 'kubectl mxjob describe mnist'\n",
			wantCode: 1,
		},
		"a typo is not found, not a job without pods": {
			objs:     objs,
			args:     []string{"logs", "mnsit"},
			wantErr:  "error: mxjobs.mxnet.mlkube.io \"mnsit\" not found; see what there is with 'kubectl mxjob list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
		"previous": {
			objs:    objs,
			args:    []string{"logs", "mnist", "--type", "scheduler", "--previous"},
			wantOut: "[pod/mnist-scheduler-0] fake logs\n",
		},
		"index without type": {
			args:     []string{"logs", "mnist", "--index", "0"},
			wantErr:  "error: --index needs --type; see 'kubectl mxjob logs --help'\n",
			wantCode: 1,
		},
	})
}

func TestSuspendResumeDelete(t *testing.T) {
	suspended := func(want bool) func(*testing.T, client.Client) {
		return func(t *testing.T, c client.Client) {
			var j v1beta1.MxJob
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "mnist"}, &j); err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(j.Spec.RunPolicy.Suspend, false); got != want {
				t.Errorf("suspend = %t, want %t", got, want)
			}
		}
	}
	remaining := func(want ...string) func(*testing.T, client.Client) {
		return func(t *testing.T, c client.Client) {
			var l v1beta1.MxJobList
			if err := c.List(context.Background(), &l); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, j := range l.Items {
				got = append(got, j.Namespace+"/"+j.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("jobs left (-want +got):\n%s", diff)
			}
		}
	}
	runCases(t, map[string]cmdCase{
		"suspend": {
			objs: []client.Object{running}, args: []string{"suspend", "mnist"},
			wantOut: "mxjob.mxnet.mlkube.io/mnist suspended\n", check: suspended(true),
		},
		"suspend all": {
			objs: []client.Object{running}, args: []string{"suspend", "--all"},
			wantOut: "mxjob.mxnet.mlkube.io/mnist suspended\n", check: suspended(true),
		},
		"suspend nothing": {
			args:     []string{"suspend"},
			wantErr:  "error: NAME is required (or --all); see 'kubectl mxjob suspend --help'\n",
			wantCode: 1,
		},
		"resume a running job": {
			objs: []client.Object{running}, args: []string{"resume", "mnist"},
			wantOut: "mxjob.mxnet.mlkube.io/mnist already resumed\n", check: suspended(false),
		},
		"delete": {
			objs: []client.Object{running, failed, pending}, args: []string{"delete", "mnist", "cifar"},
			wantOut: "mxjob.mxnet.mlkube.io \"mnist\" deleted\nmxjob.mxnet.mlkube.io \"cifar\" deleted\n",
			check:   remaining("team/other"),
		},
		"delete all": {
			objs: []client.Object{running, failed, pending}, args: []string{"delete", "--all", "-n", "team"},
			wantOut: "mxjob.mxnet.mlkube.io \"other\" deleted\n",
			check:   remaining("default/cifar", "default/mnist"),
		},
		"delete names and all": {
			args:     []string{"delete", "a", "--all"},
			wantErr:  "error: name jobs or pass --all, not both; see 'kubectl mxjob delete --help'\n",
			wantCode: 1,
		},
		"delete missing": {
			args:     []string{"delete", "a"},
			wantErr:  "error: mxjobs.mxnet.mlkube.io \"a\" not found; see what there is with 'kubectl mxjob list' (-A for all namespaces)\n",
			wantCode: cli.ExitUnknown,
		},
	})
}

func TestWait(t *testing.T) {
	runCases(t, map[string]cmdCase{
		"succeeded": {
			objs: []client.Object{succeeded}, args: []string{"wait", "done"},
			wantOut: "mxjob.mxnet.mlkube.io/done Succeeded\n",
		},
		"failed": {
			objs: []client.Object{failed}, args: []string{"wait", "cifar", "--for=Succeeded"},
			wantErr:  "error: mxjob/cifar ended Failed, not Succeeded: worker-1 exited 1; see 'kubectl mxjob describe cifar'\n",
			wantCode: 1,
		},
		"either end": {
			objs: []client.Object{failed}, args: []string{"wait", "cifar", "--for=Succeeded,Failed"},
			wantOut: "mxjob.mxnet.mlkube.io/cifar Failed\n",
		},
		"bad state": {
			args:     []string{"wait", "x", "--for=Done"},
			wantErr:  "error: --for \"Done\" is not a state; use Succeeded, Failed, Running, Suspended; see 'kubectl mxjob wait --help'\n",
			wantCode: 1,
		},
	})
}

// TestWaitTimeout steps the fake clock past --timeout while the job runs, or waits in Kueue's
// queue: exit code 2, saying what the job is as list would.
func TestWaitTimeout(t *testing.T) {
	for _, tc := range []struct {
		job  *v1beta1.MxJob
		want string
	}{
		{running, "error: timed out after 10m0s waiting for mxjob/mnist to be Succeeded (it is Running); wait longer with --timeout\n"},
		{waiting, "error: timed out after 10m0s waiting for mxjob/train to be Succeeded (it is Queued); wait longer with --timeout\n"},
	} {
		env := newTestEnv([]client.Object{tc.job}, nil)
		go func() {
			for !env.Clock.HasWaiters() {
				time.Sleep(time.Millisecond)
			}
			env.Clock.Step(time.Hour)
		}()
		code := env.Run(NewRoot(env.Env), "wait", tc.job.Name, "--timeout", "10m")
		if code != 2 {
			t.Errorf("%s: exit code %d, want 2", tc.job.Name, code)
		}
		if diff := cmp.Diff(tc.want, env.Stderr.String()); diff != "" {
			t.Errorf("%s: stderr (-want +got):\n%s", tc.job.Name, diff)
		}
	}
}

// TestWaitWatches: the job succeeds after wait started watching it. The change is made once the
// watch is open: the fake client's watch, unlike the API server's, does not replay what happened
// between the get and the watch, so a change made earlier would never reach it.
func TestWaitWatches(t *testing.T) {
	watching := make(chan struct{})
	var once sync.Once
	env := newTestEnv([]client.Object{running}, &interceptor.Funcs{
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			w, err := c.Watch(ctx, list, opts...)
			once.Do(func() { close(watching) })
			return w, err
		},
	})
	go func() {
		<-watching
		ctx := context.Background()
		var j v1beta1.MxJob
		_ = env.Factory.Ctrl.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mnist"}, &j)
		j.Status.State = v1beta1.StateSucceeded
		_ = env.Factory.Ctrl.Status().Update(ctx, &j)
	}()
	if code := env.Run(NewRoot(env.Env), "wait", "mnist"); code != 0 {
		t.Errorf("exit code %d: %s", code, env.Stderr)
	}
	if got, want := env.Stdout.String(), "mxjob.mxnet.mlkube.io/mnist Succeeded\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
}

func TestCompletion(t *testing.T) {
	runCases(t, map[string]cmdCase{
		"job names": {
			objs:    []client.Object{running, failed, pending},
			args:    []string{"__complete", "describe", "mnist", ""},
			wantOut: "cifar\n:4\n",
			wantErr: "Completion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
		"replica types": {
			args:    []string{"__complete", "logs", "mnist", "--type", ""},
			wantOut: "scheduler\nserver\nworker\n:4\n",
			wantErr: "Completion ended with directive: ShellCompDirectiveNoFileComp\n",
		},
	})
}

func TestCompletionInstall(t *testing.T) {
	dir := t.TempDir()
	env := newTestEnv(nil, nil)
	if code := env.Run(NewRoot(env.Env), "completion", "install", "--dir", dir); code != 0 {
		t.Fatalf("exit code %d: %s", code, env.Stderr)
	}
	target, err := os.Readlink(filepath.Join(dir, "kubectl_complete-mxjob"))
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(target) {
		t.Errorf("link target %q is not absolute", target)
	}
}
