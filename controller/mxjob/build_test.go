package mxjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/mxjob"
)

// defaulted returns a job as the webhook stores it.
func defaulted(b *builders.MxJobBuilder) *v1beta1.MxJob {
	job := b.Obj()
	job.UID = types.UID("job-uid")
	mxjob.Default(job)
	return job
}

func envMap(env []corev1.EnvVar) map[string]string {
	m := map[string]string{}
	for _, e := range env {
		m[e.Name] = e.Value
	}
	return m
}

func TestDMLCEnv(t *testing.T) {
	dist := defaulted(builders.MxJob("train").Dist(2, 3))
	const golden = `{"cluster":{"scheduler":[{"url":"train-scheduler-0","port":9091}],` +
		`"server":[{"url":"train-server-0","port":9091},{"url":"train-server-1","port":9091}],` +
		`"worker":[{"url":"train-worker-0","port":9091},{"url":"train-worker-1","port":9091},{"url":"train-worker-2","port":9091}]},`
	cases := map[string]struct {
		job  *v1beta1.MxJob
		r    replica
		want map[string]string
	}{
		"dist worker": {
			job: dist, r: replica{v1beta1.ReplicaTypeWorker, 2},
			want: map[string]string{
				"DMLC_ROLE": "worker", "DMLC_PS_ROOT_URI": "train-scheduler-0", "DMLC_PS_ROOT_PORT": "9091",
				"DMLC_NUM_SERVER": "2", "DMLC_NUM_WORKER": "3", "DMLC_USE_KUBERNETES": "1", "DMLC_WORKER_ID": "2",
				"MX_CONFIG": golden + `"task":{"type":"worker","index":2}}`,
			},
		},
		"dist server has no worker id": {
			job: dist, r: replica{v1beta1.ReplicaTypeServer, 1},
			want: map[string]string{
				"DMLC_ROLE": "server", "DMLC_PS_ROOT_URI": "train-scheduler-0", "DMLC_PS_ROOT_PORT": "9091",
				"DMLC_NUM_SERVER": "2", "DMLC_NUM_WORKER": "3", "DMLC_USE_KUBERNETES": "1",
				"MX_CONFIG": golden + `"task":{"type":"server","index":1}}`,
			},
		},
		"scheduler's own port is the root port": {
			job: defaulted(builders.MxJob("p").Dist(1, 1).EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.PsRootPort = ptrTo[int32](7777) })),
			r:   replica{v1beta1.ReplicaTypeScheduler, 0},
			want: map[string]string{
				"DMLC_ROLE": "scheduler", "DMLC_PS_ROOT_URI": "p-scheduler-0", "DMLC_PS_ROOT_PORT": "7777",
				"DMLC_NUM_SERVER": "1", "DMLC_NUM_WORKER": "1", "DMLC_USE_KUBERNETES": "1",
				"MX_CONFIG": `{"cluster":{"scheduler":[{"url":"p-scheduler-0","port":7777}],"server":[{"url":"p-server-0","port":9091}],` +
					`"worker":[{"url":"p-worker-0","port":9091}]},"task":{"type":"scheduler","index":0}}`,
			},
		},
		"local worker": {
			job: defaulted(builders.MxJob("solo").Local()), r: replica{v1beta1.ReplicaTypeWorker, 0},
			want: map[string]string{
				"DMLC_ROLE": "worker", "DMLC_PS_ROOT_URI": "", "DMLC_PS_ROOT_PORT": "0",
				"DMLC_NUM_SERVER": "0", "DMLC_NUM_WORKER": "1", "DMLC_USE_KUBERNETES": "1", "DMLC_WORKER_ID": "0",
				"MX_CONFIG": `{"cluster":{"scheduler":[],"server":[],"worker":[{"url":"solo-worker-0","port":9091}]},"task":{"type":"worker","index":0}}`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, envMap(envOf(tc.job, tc.r))); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestBuildReplicaPod(t *testing.T) {
	job := defaulted(builders.MxJob("train").Dist(1, 2).EditReplica(2, func(rs *v1beta1.ReplicaSpec) {
		rs.RestartPolicy = v1beta1.RestartPolicyExitCode
		rs.Template.Labels = map[string]string{"team": "vision"}
		rs.Template.Spec.Containers = append(rs.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "s",
			Env: []corev1.EnvVar{{Name: "OWN", Value: "1"}}})
	}))
	pod := podOf(job, replica{v1beta1.ReplicaTypeWorker, 1})
	if pod.Name != "train-worker-1" || pod.Namespace != "default" {
		t.Errorf("pod %s/%s; want default/train-worker-1", pod.Namespace, pod.Name)
	}
	wantLabels := map[string]string{"team": "vision", "app.kubernetes.io/managed-by": "mlkube",
		v1beta1.LabelJobName: "train", v1beta1.LabelReplicaType: "worker", v1beta1.LabelReplicaIndex: "1"}
	if diff := cmp.Diff(wantLabels, pod.Labels); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("ExitCode maps to pod restartPolicy %q; want Never (the controller recreates)", pod.Spec.RestartPolicy)
	}
	if ref := pod.OwnerReferences; len(ref) != 1 || ref[0].UID != "job-uid" || !*ref[0].Controller || ref[0].Kind != "MxJob" {
		t.Errorf("owner references %+v; want the job as controller", ref)
	}
	for _, c := range pod.Spec.Containers {
		env := envMap(c.Env)
		if env["DMLC_ROLE"] != "worker" || env["DMLC_WORKER_ID"] != "1" {
			t.Errorf("container %s lacks the DMLC env: %v", c.Name, env)
		}
	}
	if envMap(pod.Spec.Containers[1].Env)["OWN"] != "1" {
		t.Error("the container's own env was dropped")
	}
	if len(job.Spec.ReplicaSpecs[2].Template.Spec.Containers[0].Env) != 0 {
		t.Error("building the pod changed the job's template")
	}
	for policy, want := range map[v1beta1.RestartPolicy]corev1.RestartPolicy{
		v1beta1.RestartPolicyNever: corev1.RestartPolicyNever, v1beta1.RestartPolicyOnFailure: corev1.RestartPolicyOnFailure,
		v1beta1.RestartPolicyAlways: corev1.RestartPolicyAlways, v1beta1.RestartPolicyExitCode: corev1.RestartPolicyNever,
	} {
		if got := podRestartPolicy(policy); got != want {
			t.Errorf("podRestartPolicy(%s) = %s; want %s", policy, got, want)
		}
	}
}

func TestBuildReplicaService(t *testing.T) {
	job := defaulted(builders.MxJob("train").Dist(1, 1).EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.PsRootPort = ptrTo[int32](7000) }))
	svc := buildReplicaService(job, replica{v1beta1.ReplicaTypeScheduler, 0})
	if svc.Name != "train-scheduler-0" || svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("service %s clusterIP=%q publishNotReady=%v; want headless train-scheduler-0 publishing not-ready addresses",
			svc.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 7000 || svc.Spec.Ports[0].TargetPort.IntVal != 7000 {
		t.Errorf("ports %+v; want 7000", svc.Spec.Ports)
	}
	pod := podOf(job, replica{v1beta1.ReplicaTypeScheduler, 0})
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which its pod does not carry", k, v)
		}
	}
}

// podOf and envOf are replica r's pod and environment, the job's cluster rendered for it alone.
func podOf(job *v1beta1.MxJob, r replica) *corev1.Pod {
	return buildReplicaPod(job, mxCluster(job).Encode(), r)
}

func envOf(job *v1beta1.MxJob, r replica) []corev1.EnvVar {
	return dmlcEnv(job, mxCluster(job).Encode(), r)
}
