package mxjob

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/restricted"
	"github.com/mlkube/mlkube/internal/restricted/restrictedtest"
)

const kubeflowV1 = `apiVersion: kubeflow.org/v1
kind: MXJob
metadata:
  name: mnist
spec:
  jobMode: MXTrain
  runPolicy:
    cleanPodPolicy: All
    schedulingPolicy: {minAvailable: 3}
  mxReplicaSpecs:
    Worker:
      replicas: 2
      restartPolicy: Never
      template:
        spec:
          containers:
          - name: mxnet
            image: mxnet:1.9
    Scheduler:
      replicas: 1
      template:
        spec:
          containers:
          - name: mxnet
            image: mxnet:1.9
            ports:
            - name: mxjob-port
              containerPort: 9000
`

const kubeflowV1beta1 = `apiVersion: kubeflow.org/v1beta1
kind: MXJob
metadata: {name: old}
spec:
  backoffLimit: 3
  mxReplicaSpecs:
    Worker:
      template:
        spec:
          containers: [{name: mxnet, image: mxnet:1.9}]
`

// kubeflowGang asks Volcano for a gang, a queue and a priority; the Server has a priority of its
// own.
const kubeflowGang = `apiVersion: kubeflow.org/v1
kind: MXJob
metadata: {name: gang}
spec:
  runPolicy:
    schedulingPolicy:
      minAvailable: 4
      queue: team
      priorityClass: high
      minResources: {cpu: "8"}
      scheduleTimeoutSeconds: 600
  mxReplicaSpecs:
    Scheduler:
      template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
    Server:
      template: {spec: {priorityClassName: low, containers: [{name: mxnet, image: mxnet:1.9}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
`

// kubeflowLabelled is queued by Kueue's own label, which wins over the scheduling policy's queue;
// as a v1beta1 job, its policies are on the spec.
const kubeflowLabelled = `apiVersion: kubeflow.org/v1beta1
kind: MXJob
metadata:
  name: labelled
  labels: {kueue.x-k8s.io/queue-name: research}
spec:
  schedulingPolicy: {queue: team}
  mxReplicaSpecs:
    Worker:
      template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
`

const native = `# a comment-only document is skipped
---
apiVersion: mxnet.mlkube.io/v1beta1
kind: MxJob
metadata: {name: native}
spec:
  replicaSpecs:
  - mxReplicaType: WORKER
    template: {spec: {containers: [{name: mxnet, image: mxnet:1.9}]}}
`

func TestCreate(t *testing.T) {
	runCases(t, map[string]cmdCase{
		"kubeflow v1, dry run yaml": {
			stdin: kubeflowV1,
			args:  []string{"create", "-f", "-", "--dry-run=client", "-o", "yaml"},
			wantOut: `apiVersion: mxnet.mlkube.io/v1beta1
kind: MxJob
metadata:
  name: mnist
  namespace: default
spec:
  jobMode: dist
  replicaSpecs:
  - mxReplicaType: SCHEDULER
    psRootPort: 9000
    replicas: 1
    template:
      metadata: {}
      spec:
        containers:
        - image: mxnet:1.9
          name: mxnet
          ports:
          - containerPort: 9000
            name: mxjob-port
          resources: {}
  - mxReplicaType: WORKER
    replicas: 2
    restartPolicy: Never
    template:
      metadata: {}
      spec:
        containers:
        - image: mxnet:1.9
          name: mxnet
          resources: {}
  runPolicy:
    cleanPodPolicy: All
status: {}
`,
			wantErr: `converted Kubeflow MXJob "mnist":
  apiVersion kubeflow.org/v1, kind MXJob -> mxnet.mlkube.io/v1beta1, kind MxJob
  spec.mxReplicaSpecs.Scheduler -> spec.replicaSpecs[0] (mxReplicaType SCHEDULER)
  psRootPort 9000 from the Scheduler's mxnet container port mxjob-port
  spec.mxReplicaSpecs.Worker -> spec.replicaSpecs[1] (mxReplicaType WORKER)
  spec.jobMode MXTrain -> dist
  spec.runPolicy.schedulingPolicy.minAvailable dropped: an MxJob needs all of its pods, and Kueue admits a queued job's pods together
`,
		},
		"multi-document": {
			stdin:   kubeflowV1beta1 + "---\n" + native,
			args:    []string{"create", "-f", "-"},
			wantOut: "mxjob.mxnet.mlkube.io/old created\nmxjob.mxnet.mlkube.io/native created\n",
			wantErr: `converted Kubeflow MXJob "old":
  apiVersion kubeflow.org/v1beta1, kind MXJob -> mxnet.mlkube.io/v1beta1, kind MxJob
  spec.mxReplicaSpecs.Worker -> spec.replicaSpecs[0] (mxReplicaType WORKER)
  spec.jobMode (unset) -> local
  spec.{cleanPodPolicy,backoffLimit,activeDeadlineSeconds,ttlSecondsAfterFinished} -> spec.runPolicy
`,
		},
		"kubeflow scheduling policy": {
			stdin:   kubeflowGang,
			args:    []string{"create", "-f", "-", "--dry-run=client", "-o", "jsonpath={.metadata.labels} {.spec.replicaSpecs[*].template.spec.priorityClassName}"},
			wantOut: `{"kueue.x-k8s.io/queue-name":"team"} high low high`,
			wantErr: `converted Kubeflow MXJob "gang":
  apiVersion kubeflow.org/v1, kind MXJob -> mxnet.mlkube.io/v1beta1, kind MxJob
  spec.mxReplicaSpecs.Scheduler -> spec.replicaSpecs[0] (mxReplicaType SCHEDULER)
  spec.mxReplicaSpecs.Server -> spec.replicaSpecs[1] (mxReplicaType SERVER)
  spec.mxReplicaSpecs.Worker -> spec.replicaSpecs[2] (mxReplicaType WORKER)
  spec.jobMode (unset) -> dist
  spec.runPolicy.schedulingPolicy.queue team -> label kueue.x-k8s.io/queue-name (the LocalQueue Kueue admits the job from)
  spec.runPolicy.schedulingPolicy.priorityClass high -> spec.priorityClassName of the SCHEDULER, WORKER templates (SERVER keeps low)
  spec.runPolicy.schedulingPolicy.minAvailable dropped: an MxJob needs all of its pods, and Kueue admits a queued job's pods together
  spec.runPolicy.schedulingPolicy.minResources dropped: Kueue charges a queued job the requests of all of its pods
  spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds dropped: a queued job waits in its LocalQueue until Kueue admits it
`,
		},
		"kubeflow queue label wins": {
			stdin:   kubeflowLabelled,
			args:    []string{"create", "-f", "-", "--dry-run=client", "-o", "jsonpath={.metadata.labels}"},
			wantOut: `{"kueue.x-k8s.io/queue-name":"research"}`,
			wantErr: `converted Kubeflow MXJob "labelled":
  apiVersion kubeflow.org/v1beta1, kind MXJob -> mxnet.mlkube.io/v1beta1, kind MxJob
  spec.mxReplicaSpecs.Worker -> spec.replicaSpecs[0] (mxReplicaType WORKER)
  spec.jobMode (unset) -> local
  spec.schedulingPolicy.queue team dropped: the job's label kueue.x-k8s.io/queue-name names LocalQueue research
`,
		},
		"kubeflow queue that is no name": {
			stdin:    strings.Replace(kubeflowGang, "queue: team", "queue: Team_A", 1),
			args:     []string{"create", "-f", "-"},
			wantErr:  "error: -, document 1: spec.runPolicy.schedulingPolicy.queue \"Team_A\" is not a valid name: " + dns1123Subdomain + "; name a LocalQueue of the namespace (kubectl get localqueues)\n",
			wantCode: 1,
		},
		"kubeflow scheduling policy typo": {
			stdin:    strings.Replace(kubeflowGang, "queue: team", "queu: team", 1),
			args:     []string{"create", "-f", "-"},
			wantErr:  "error: -, document 1: reading the Kubeflow MXJob: error unmarshaling JSON: while decoding JSON: json: unknown field \"queu\"\n",
			wantCode: 1,
		},
		"not an MxJob": {
			stdin:    native + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			args:     []string{"create", "-f", "-"},
			wantErr:  "error: -, document 3: v1 Pod is not an MxJob; this takes mxnet.mlkube.io/v1beta1 MxJobs and kubeflow.org/v1 or v1beta1 MXJobs (use kubectl apply for the rest)\n",
			wantCode: 1,
		},
		"typo": {
			stdin:    "apiVersion: mxnet.mlkube.io/v1beta1\nkind: MxJob\nmetadata: {name: x}\nspec: {replicaSpec: []}\n",
			args:     []string{"create", "-f", "-"},
			wantErr:  "error: -, document 1: error unmarshaling JSON: while decoding JSON: json: unknown field \"replicaSpec\"\n",
			wantCode: 1,
		},
		"MXTune": {
			stdin:    "apiVersion: kubeflow.org/v1\nkind: MXJob\nmetadata: {name: t}\nspec:\n  jobMode: MXTune\n  mxReplicaSpecs: {Tuner: {}}\n",
			args:     []string{"create", "-f", "-"},
			wantErr:  "error: -, document 1: replica type \"Tuner\" has no MxJob equivalent: MXTune jobs (TunerTracker, TunerServer, Tuner) are not supported; use Scheduler, Server and Worker\n",
			wantCode: 1,
		},
		"namespace conflict": {
			stdin:    "apiVersion: mxnet.mlkube.io/v1beta1\nkind: MxJob\nmetadata: {name: x, namespace: a}\nspec: {replicaSpecs: [{}]}\n",
			args:     []string{"create", "-f", "-", "-n", "b"},
			wantErr:  "error: MxJob \"x\" names namespace \"a\" but -n says \"b\"; drop one of them\n",
			wantCode: 1,
		},
		"no file": {
			args:     []string{"create"},
			wantErr:  "error: -f FILENAME is required; see 'kubectl mxjob create --help'\n",
			wantCode: 1,
		},
	})
}

// dns1123Subdomain is how Kubernetes refuses a name that is no DNS subdomain.
var dns1123Subdomain = validation.IsDNS1123Subdomain("Team_A")[0]

func TestSubmit(t *testing.T) {
	runCases(t, map[string]cmdCase{
		"queued, dry run": {
			args:    []string{"submit", "mnist", "--image", "mxnet:1.9", "--queue", "team", "--priority-class", "high", "--dry-run=client", "-o", "jsonpath={.metadata.labels}", "--", "python"},
			wantOut: `{"kueue.x-k8s.io/priority-class":"high","kueue.x-k8s.io/queue-name":"team"}`,
		},
		"queued, created": {
			args:    []string{"submit", "mnist", "--image", "mxnet:1.9", "--queue", "team", "--", "python"},
			wantOut: "mxjob.mxnet.mlkube.io/mnist created\n",
			check:   jobLabels("mnist", map[string]string{labels.KueueQueueName: "team"}),
		},
		"not queued": {
			args:    []string{"submit", "mnist", "--image", "mxnet:1.9", "--", "python"},
			wantOut: "mxjob.mxnet.mlkube.io/mnist created\n",
			check:   jobLabels("mnist", nil),
		},
		"a priority class without a queue": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--priority-class", "high", "--", "python"},
			wantErr:  "error: --priority-class applies to a job queued by Kueue; add --queue NAME (a LocalQueue of the namespace); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a queue that is no name": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--queue", "Team_A", "--", "python"},
			wantErr:  "error: --queue \"Team_A\" is not a valid name: " + dns1123Subdomain + "; name a LocalQueue of the namespace (kubectl get localqueues); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a queue too long for a label": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--queue", strings.Repeat("q", 64), "--", "python"},
			wantErr:  "error: --queue \"" + strings.Repeat("q", 64) + "\" is not a valid name: must be no more than 63 bytes; name a LocalQueue of the namespace (kubectl get localqueues); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a priority class that is no name": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--queue", "team", "--priority-class", "High", "--dry-run=client", "--", "python"},
			wantErr:  "error: --priority-class \"High\" is not a valid name: " + dns1123Subdomain + "; name a WorkloadPriorityClass (kubectl get workloadpriorityclasses); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a quantity that is none": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--worker-cpu", "lots", "--", "python"},
			wantErr:  "error: --worker-cpu \"lots\" is not a quantity; use e.g. 4 or 500m; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a memory that is none": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--server-memory", "8GB!", "--dry-run=client", "--", "python"},
			wantErr:  "error: --server-memory \"8GB!\" is not a quantity; use e.g. 8Gi or 512Mi; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a success policy that is none": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--success-policy", "Some", "--", "python"},
			wantErr:  "error: --success-policy must be AllWorkers or unset, not \"Some\"; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a success policy of a local job": {
			args:     []string{"submit", "mnist", "--mode", "local", "--image", "mxnet:1.9", "--success-policy", "AllWorkers", "--", "python"},
			wantErr:  "error: --mode local succeeds with its worker; drop --success-policy or use --mode dist; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"a restart policy that is none": {
			args:     []string{"submit", "mnist", "--image", "mxnet:1.9", "--restart-policy", "Sometimes", "--dry-run=client", "--", "python"},
			wantErr:  "error: --restart-policy \"Sometimes\" is not one of Never, OnFailure, Always, ExitCode; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"dist, dry run": {
			args: []string{"submit", "mnist", "--image", "mxnet:1.9", "--workers", "2", "--port", "9000", "--env", "EPOCHS=3",
				"--worker-gpus", "1", "--server-image", "ps:1", "--server-memory", "1Gi", "--backoff-limit", "2", "--run-as-user", "1000",
				"--dry-run=client", "-o", "yaml", "--", "python", "train.py"},
			wantOut: `apiVersion: mxnet.mlkube.io/v1beta1
kind: MxJob
metadata:
  name: mnist
  namespace: default
spec:
  jobMode: dist
  replicaSpecs:
  - mxReplicaType: SCHEDULER
    psRootPort: 9000
    replicas: 1
    restartPolicy: Never
    template:
      metadata: {}
      spec:
        containers:
        - command:
          - python
          - train.py
          env:
          - name: EPOCHS
            value: "3"
          image: mxnet:1.9
          name: mxnet
          resources: {}
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop:
              - ALL
        securityContext:
          runAsGroup: 1000
          runAsNonRoot: true
          runAsUser: 1000
          seccompProfile:
            type: RuntimeDefault
  - mxReplicaType: SERVER
    replicas: 1
    restartPolicy: Never
    template:
      metadata: {}
      spec:
        containers:
        - command:
          - python
          - train.py
          env:
          - name: EPOCHS
            value: "3"
          image: ps:1
          name: mxnet
          resources:
            limits:
              memory: 1Gi
            requests:
              memory: 1Gi
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop:
              - ALL
        securityContext:
          runAsGroup: 1000
          runAsNonRoot: true
          runAsUser: 1000
          seccompProfile:
            type: RuntimeDefault
  - mxReplicaType: WORKER
    replicas: 2
    restartPolicy: Never
    template:
      metadata: {}
      spec:
        containers:
        - command:
          - python
          - train.py
          env:
          - name: EPOCHS
            value: "3"
          image: mxnet:1.9
          name: mxnet
          resources:
            limits:
              nvidia.com/gpu: "1"
            requests:
              nvidia.com/gpu: "1"
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop:
              - ALL
        securityContext:
          runAsGroup: 1000
          runAsNonRoot: true
          runAsUser: 1000
          seccompProfile:
            type: RuntimeDefault
  runPolicy:
    backoffLimit: 2
status: {}
`,
		},
		"local, created": {
			args:    []string{"submit", "quick", "--mode", "local", "--image", "mxnet:1.9", "--", "python", "t.py"},
			wantOut: "mxjob.mxnet.mlkube.io/quick created\n",
		},
		"no command": {
			args:     []string{"submit", "x", "--image", "i"},
			wantErr:  "error: the command to run is required after --; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"no image": {
			args:     []string{"submit", "x", "--", "python"},
			wantErr:  "error: --image is required (or --scheduler-image); see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"local with servers": {
			args:     []string{"submit", "x", "--mode", "local", "--servers", "2", "--image", "i", "--", "python"},
			wantErr:  "error: --mode local has no servers; drop --servers or use --mode dist; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"root user": {
			args:     []string{"submit", "x", "--image", "i", "--run-as-user", "0", "--", "python"},
			wantErr:  "error: --run-as-user must be a non-root uid, 1 to 2147483647; see 'kubectl mxjob submit --help'\n",
			wantCode: 1,
		},
		"bad env": {
			args:     []string{"submit", "x", "--image", "i", "--env", "NOVALUE", "--", "python"},
			wantErr:  "error: --env \"NOVALUE\" is not KEY=VALUE\n",
			wantCode: 1,
		},
	})
}

// jobLabels checks the labels of the job name in the cluster.
func jobLabels(name string, want map[string]string) func(*testing.T, client.Client) {
	return func(t *testing.T, c client.Client) {
		var j v1beta1.MxJob
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &j); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, j.Labels); diff != "" {
			t.Errorf("labels (-want +got):\n%s", diff)
		}
	}
}

// TestSubmitSuccessPolicy: --success-policy AllWorkers reaches spec.successPolicy.
func TestSubmitSuccessPolicy(t *testing.T) {
	job, err := buildSubmitJob(submitSpec{mode: "dist", image: "i", workers: 2, servers: 1, command: []string{"train"},
		successPolicy: "AllWorkers", runAsUser: restricted.DefaultUser, roles: map[v1beta1.ReplicaType]*roleFlags{}})
	if err != nil || job.Spec.SuccessPolicy != v1beta1.SuccessPolicyAllWorkers {
		t.Errorf("spec.successPolicy %q, %v; want AllWorkers", job.Spec.SuccessPolicy, err)
	}
}

// Every replica submit writes is admitted by a namespace that enforces the restricted Pod
// Security Standard, by the API server's own evaluator.
func TestSubmitPassesRestricted(t *testing.T) {
	job, err := buildSubmitJob(submitSpec{mode: "dist", image: "i", workers: 2, servers: 1, command: []string{"train"},
		runAsUser: restricted.DefaultUser, roles: map[v1beta1.ReplicaType]*roleFlags{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(job.Spec.ReplicaSpecs) != 3 {
		t.Fatalf("%d replica specs, want scheduler, server and worker", len(job.Spec.ReplicaSpecs))
	}
	for _, rs := range job.Spec.ReplicaSpecs {
		v, err := restrictedtest.Violations(&rs.Template.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) > 0 {
			t.Errorf("%s: restricted refuses it: %v", rs.MxReplicaType, v)
		}
	}
}
