package mxjob

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

const (
	required     = "Required value"
	invalid      = "Invalid value"
	forbidden    = "Forbidden"
	notSupported = "Unsupported value"
	duplicate    = "Duplicate value"
)

func TestValidateCreate(t *testing.T) {
	withContainers := func(cs ...corev1.Container) func(*v1beta1.ReplicaSpec) {
		return func(rs *v1beta1.ReplicaSpec) { rs.Template.Spec.Containers = cs }
	}
	cases := map[string]struct {
		job  *v1beta1.MxJob
		want []string
	}{
		// rule: psRootPort and the mxnet container's declared mxjob-port agree
		"declared mxjob-port without psRootPort": {
			job: builders.MxJob("train").Dist(1, 1).EditReplica(0, withMxjobPort(nil, 9000)).Obj(),
		},
		"psRootPort equal to the declared mxjob-port": {
			job: builders.MxJob("train").Dist(1, 1).EditReplica(0, withMxjobPort(ptr.To[int32](9000), 9000)).Obj(),
		},
		"psRootPort differs from the scheduler's declared mxjob-port": {
			job:  builders.MxJob("train").Dist(1, 1).EditReplica(0, withMxjobPort(ptr.To[int32](9091), 9000)).Obj(),
			want: []string{"spec.replicaSpecs[0].psRootPort: " + invalid},
		},
		"psRootPort differs from a worker's declared mxjob-port": {
			job:  builders.MxJob("train").Dist(1, 1).EditReplica(2, withMxjobPort(ptr.To[int32](9091), 9000)).Obj(),
			want: []string{"spec.replicaSpecs[2].psRootPort: " + invalid},
		},
		"an mxjob-port of a sidecar is not the mxnet container's": {
			job: builders.MxJob("train").Local().EditReplica(0, func(rs *v1beta1.ReplicaSpec) {
				rs.PsRootPort = ptr.To[int32](9091)
				rs.Template.Spec.Containers = append(rs.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "x",
					Ports: []corev1.ContainerPort{{Name: "mxjob-port", ContainerPort: 9000}}})
			}).Obj(),
		},
		"valid dist job": {
			job: builders.MxJob("train").Dist(2, 3).Obj(),
		},
		"valid local job": {
			job: builders.MxJob("train").Local().Obj(),
		},
		"valid job with every optional field unset": {
			job: &v1beta1.MxJob{ObjectMeta: metav1.ObjectMeta{Name: "bare"}, Spec: v1beta1.MxJobSpec{
				ReplicaSpecs: []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}},
			}},
		},
		// rule: a replica spec without template is rejected
		"replica without template": {
			job:  builders.MxJob("train").Local().EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.Template = nil }).Obj(),
			want: []string{"spec.replicaSpecs[0].template: " + required},
		},
		// rule: the type must be one of the three
		"unknown replica type": {
			job:  builders.MxJob("train").Dist(1, 1).Replica("EVALUATOR", 1).Obj(),
			want: []string{"spec.replicaSpecs[3].mxReplicaType: " + notSupported},
		},
		// rule: every replica's template has a container named mxnet
		"no mxnet container": {
			job:  builders.MxJob("train").Dist(1, 1).EditReplica(1, withContainers(corev1.Container{Name: "main", Image: "x"})).Obj(),
			want: []string{"spec.replicaSpecs[1].template.spec.containers: " + required},
		},
		"mxnet container beside a sidecar": {
			job: builders.MxJob("train").Local().EditReplica(0, withContainers(
				corev1.Container{Name: "sidecar", Image: "x"}, corev1.Container{Name: "mxnet", Image: "y"})).Obj(),
		},
		// rule: local mode may hold only WORKER replicas
		"local with a scheduler": {
			job:  builders.MxJob("train").Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj(),
			want: []string{"spec.replicaSpecs[1].mxReplicaType: " + forbidden},
		},
		// rule: local mode holds at most one worker
		"local with two workers": {
			job:  builders.MxJob("train").Mode(v1beta1.LocalMode).Replica(v1beta1.ReplicaTypeWorker, 2).Obj(),
			want: []string{"spec.replicaSpecs: " + invalid},
		},
		// rule: dist mode must hold all three types
		"dist without servers": {
			job: builders.MxJob("train").Mode(v1beta1.DistMode).
				Replica(v1beta1.ReplicaTypeScheduler, 1).Replica(v1beta1.ReplicaTypeWorker, 2).Obj(),
			want: []string{"spec.replicaSpecs: " + required},
		},
		"dist with workers only": {
			job:  builders.MxJob("train").Mode(v1beta1.DistMode).Replica(v1beta1.ReplicaTypeWorker, 2).Obj(),
			want: []string{"spec.replicaSpecs: " + required, "spec.replicaSpecs: " + required},
		},
		"mode inferred as dist from a server": {
			job:  builders.MxJob("train").Replica(v1beta1.ReplicaTypeServer, 1).Replica(v1beta1.ReplicaTypeWorker, 1).Obj(),
			want: []string{"spec.replicaSpecs: " + required},
		},
		// rule: any other mode is rejected
		"unknown mode": {
			job:  builders.MxJob("train").Local().Mode("cluster").Obj(),
			want: []string{"spec.jobMode: " + notSupported},
		},
		"no replica specs": {
			job:  builders.MxJob("train").Mode(v1beta1.LocalMode).Obj(),
			want: []string{"spec.replicaSpecs: " + required},
		},
		// rule: a replica type appears at most once
		"worker twice": {
			job:  builders.MxJob("train").Dist(1, 1).Replica(v1beta1.ReplicaTypeWorker, 1).Obj(),
			want: []string{"spec.replicaSpecs[3].mxReplicaType: " + duplicate},
		},
		// rule: SCHEDULER replicas is exactly 1
		"two schedulers": {
			job:  builders.MxJob("train").Dist(1, 1).EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.Replicas = ptr.To[int32](2) }).Obj(),
			want: []string{"spec.replicaSpecs[0].replicas: " + invalid},
		},
		// rule: replicas >= 1
		"zero workers": {
			job:  builders.MxJob("train").Dist(1, 0).Obj(),
			want: []string{"spec.replicaSpecs[2].replicas: " + invalid},
		},
		"negative servers": {
			job:  builders.MxJob("train").Dist(-1, 1).Obj(),
			want: []string{"spec.replicaSpecs[1].replicas: " + invalid},
		},
		// rule: replicas of one spec at most MaxReplicas (2^31-1 workers once ran the manager out of memory)
		"workers at the limit": {
			job: builders.MxJob("t").Dist(1, v1beta1.MaxReplicas).Obj(),
		},
		"workers past the limit": {
			job:  builders.MxJob("t").Dist(1, math.MaxInt32).Obj(),
			want: []string{"spec.replicaSpecs[2].replicas: " + invalid},
		},
		// rule: every container has an image
		"container without image": {
			job: builders.MxJob("train").Local().EditReplica(0, withContainers(
				corev1.Container{Name: "mxnet", Image: "x"}, corev1.Container{Name: "sidecar"})).Obj(),
			want: []string{"spec.replicaSpecs[0].template.spec.containers[1].image: " + required},
		},
		// rule: ports in 1..65535
		"psRootPort out of range": {
			job:  builders.MxJob("train").Dist(1, 1).EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.PsRootPort = ptr.To[int32](70000) }).Obj(),
			want: []string{"spec.replicaSpecs[0].psRootPort: " + invalid},
		},
		"container port zero": {
			job: builders.MxJob("train").Local().EditReplica(0, withContainers(
				corev1.Container{Name: "mxnet", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 0}}})).Obj(),
			want: []string{"spec.replicaSpecs[0].template.spec.containers[0].ports[0].containerPort: " + invalid},
		},
		"host port out of range": {
			job: builders.MxJob("train").Local().EditReplica(0, withContainers(
				corev1.Container{Name: "mxnet", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 80, HostPort: 65536}}})).Obj(),
			want: []string{"spec.replicaSpecs[0].template.spec.containers[0].ports[0].hostPort: " + invalid},
		},
		"bad env name": {
			job: builders.MxJob("train").Local().EditReplica(0, withContainers(
				corev1.Container{Name: "mxnet", Image: "x", Env: []corev1.EnvVar{{Name: "1=BAD"}}})).Obj(),
			want: []string{"spec.replicaSpecs[0].template.spec.containers[0].env[0].name: " + invalid},
		},
		// rule: restart policy in its enum
		"valid ExitCode restart policy": {
			job: builders.MxJob("train").Local().EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = v1beta1.RestartPolicyExitCode }).Obj(),
		},
		"unknown restart policy": {
			job:  builders.MxJob("train").Local().EditReplica(0, func(rs *v1beta1.ReplicaSpec) { rs.RestartPolicy = "Sometimes" }).Obj(),
			want: []string{"spec.replicaSpecs[0].restartPolicy: " + notSupported},
		},
		// rule: clean pod policy in its enum
		"valid clean pod policy All": {
			job: builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) { rp.CleanPodPolicy = v1beta1.CleanPodPolicyAll }).Obj(),
		},
		"unknown clean pod policy": {
			job:  builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) { rp.CleanPodPolicy = "Some" }).Obj(),
			want: []string{"spec.runPolicy.cleanPodPolicy: " + notSupported},
		},
		// rule: non-negative run-policy numbers
		"zero run-policy numbers": {
			job: builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) {
				rp.BackoffLimit, rp.ActiveDeadlineSeconds, rp.TTLSecondsAfterFinished = ptr.To[int32](0), ptr.To[int64](0), ptr.To[int32](0)
			}).Obj(),
		},
		// rule: run-policy numbers bounded
		"run-policy numbers at their limits": {
			job: builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) {
				rp.BackoffLimit, rp.ActiveDeadlineSeconds, rp.TTLSecondsAfterFinished = ptr.To(v1beta1.MaxBackoffLimit), ptr.To(v1beta1.MaxSeconds), ptr.To(int32(v1beta1.MaxSeconds))
			}).Obj(),
		},
		"run-policy numbers past their limits": {
			job: builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) {
				rp.BackoffLimit, rp.ActiveDeadlineSeconds, rp.TTLSecondsAfterFinished = ptr.To(v1beta1.MaxBackoffLimit+1), ptr.To(v1beta1.MaxSeconds+1), ptr.To(int32(v1beta1.MaxSeconds+1))
			}).Obj(),
			want: []string{
				"spec.runPolicy.backoffLimit: " + invalid,
				"spec.runPolicy.activeDeadlineSeconds: " + invalid,
				"spec.runPolicy.ttlSecondsAfterFinished: " + invalid,
			},
		},
		"negative run-policy numbers": {
			job: builders.MxJob("train").Local().RunPolicy(func(rp *v1beta1.RunPolicy) {
				rp.BackoffLimit, rp.ActiveDeadlineSeconds, rp.TTLSecondsAfterFinished = ptr.To[int32](-1), ptr.To[int64](-1), ptr.To[int32](-1)
			}).Obj(),
			want: []string{
				"spec.runPolicy.backoffLimit: " + invalid,
				"spec.runPolicy.activeDeadlineSeconds: " + invalid,
				"spec.runPolicy.ttlSecondsAfterFinished: " + invalid,
			},
		},
		"success policy AllWorkers": {
			job: func() *v1beta1.MxJob {
				j := builders.MxJob("train").Dist(1, 2).Obj()
				j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers
				return j
			}(),
		},
		"unknown success policy": {
			job: func() *v1beta1.MxJob {
				j := builders.MxJob("train").Dist(1, 2).Obj()
				j.Spec.SuccessPolicy = "AnyWorker"
				return j
			}(),
			want: []string{"spec.successPolicy: " + notSupported},
		},
		// rule: the name leaves room for <job>-<type>-<index> in 63 characters
		"name at the computed maximum": {
			// "-scheduler-0" is the longest suffix: 63-12 = 51.
			job: builders.MxJob(strings.Repeat("a", 51)).Dist(1, 1).Obj(),
		},
		"name one over the computed maximum": {
			job:  builders.MxJob(strings.Repeat("a", 52)).Dist(1, 1).Obj(),
			want: []string{"metadata.name: " + invalid},
		},
		"many workers shorten the maximum": {
			// "-worker-99" is 10 characters: 53 allowed, 54 rejected.
			job:  builders.MxJob(strings.Repeat("a", 54)).Mode(v1beta1.DistMode).Replica(v1beta1.ReplicaTypeWorker, 100).Obj(),
			want: []string{"metadata.name: " + invalid, "spec.replicaSpecs: " + required, "spec.replicaSpecs: " + required},
		},
		"generateName counts its random suffix": {
			job: func() *v1beta1.MxJob {
				j := builders.MxJob("").Dist(1, 1).Obj()
				j.GenerateName = strings.Repeat("g", 47) // + 5 generated = 52
				return j
			}(),
			want: []string{"metadata.name: " + invalid},
		},
		"name starting with a digit": {
			job:  builders.MxJob("1train").Local().Obj(),
			want: []string{"metadata.name: " + invalid},
		},
		"every error at once": {
			job: builders.MxJob("train").Mode(v1beta1.LocalMode).
				Replica(v1beta1.ReplicaTypeScheduler, 2).
				Replica(v1beta1.ReplicaTypeWorker, 1).
				EditReplica(1, func(rs *v1beta1.ReplicaSpec) { rs.Template = nil }).Obj(),
			want: []string{
				"spec.replicaSpecs[0].replicas: " + invalid,
				"spec.replicaSpecs[0].mxReplicaType: " + forbidden,
				"spec.replicaSpecs[1].template: " + required,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := webhooktest.Keys(ValidateCreate(tc.job))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateCreate() errors (-want +got):\n%s", diff)
			}
		})
	}
}

// withMxjobPort sets a replica's psRootPort and gives its mxnet container, after a port of another
// name, a port named mxjob-port.
func withMxjobPort(psRootPort *int32, declared int32) func(*v1beta1.ReplicaSpec) {
	return func(rs *v1beta1.ReplicaSpec) {
		rs.PsRootPort = psRootPort
		rs.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "metrics", ContainerPort: 8080}, {Name: "mxjob-port", ContainerPort: declared}}
	}
}

func TestMessagesSayWhatToDo(t *testing.T) {
	cases := map[string]struct {
		job  *v1beta1.MxJob
		want []string
	}{
		"missing mxnet container": {
			job: builders.MxJob("train").Local().EditReplica(0, func(rs *v1beta1.ReplicaSpec) {
				rs.Template.Spec.Containers[0].Name = "main"
			}).Obj(),
			want: []string{`spec.replicaSpecs[0].template.spec.containers: Required value: a container named "mxnet" is required`},
		},
		"local with scheduler": {
			job:  builders.MxJob("train").Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj(),
			want: []string{"spec.replicaSpecs[1].mxReplicaType: Forbidden: local mode runs only a WORKER, not a SCHEDULER; remove this replica spec or set spec.jobMode to dist"},
		},
		"psRootPort and mxjob-port disagree: both paths named, psRootPort to change": {
			job: builders.MxJob("train").Dist(1, 1).EditReplica(0, withMxjobPort(ptr.To[int32](9091), 9000)).Obj(),
			want: []string{`spec.replicaSpecs[0].psRootPort: Invalid value: 9091: differs from ` +
				`spec.replicaSpecs[0].template.spec.containers[0].ports[1].containerPort (9000), the "mxjob-port" port of container "mxnet"; ` +
				`remove psRootPort (it defaults to the declared port) or set it to 9000`},
		},
		"name too long names the maximum": {
			job:  builders.MxJob(strings.Repeat("a", 60)).Dist(1, 1).Obj(),
			want: []string{"must be no more than 51 characters (is 60)", `"<name>-scheduler-0"`, "choose a shorter name"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msg := webhooktest.Messages(ValidateCreate(tc.job))
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("messages %q do not contain %q", msg, w)
				}
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	base := func() *v1beta1.MxJob {
		j := builders.MxJob("train").Dist(1, 2).Obj()
		Default(j)
		return j
	}
	cases := map[string]struct {
		old  func(*v1beta1.MxJob)
		edit func(*v1beta1.MxJob)
		want []string
	}{
		"suspend may change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) },
		},
		"labels may change": {
			edit: func(j *v1beta1.MxJob) { j.Labels = map[string]string{"team": "a"} },
		},
		"spelling out a default is no change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.CleanPodPolicy = "" },
		},
		"workers may not change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.ReplicaSpecs[2].Replicas = ptr.To[int32](5) },
			want: []string{"spec.replicaSpecs[2]: " + forbidden},
		},
		"image may not change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.ReplicaSpecs[1].Template.Spec.Containers[0].Image = "other" },
			want: []string{"spec.replicaSpecs[1]: " + forbidden},
		},
		"backoff limit may not change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.BackoffLimit = ptr.To[int32](3) },
			want: []string{"spec.runPolicy: " + forbidden},
		},
		"success policy may not change": {
			edit: func(j *v1beta1.MxJob) { j.Spec.SuccessPolicy = v1beta1.SuccessPolicyAllWorkers },
			want: []string{"spec.successPolicy: " + forbidden},
		},
		"adding a replica spec is rejected twice over": {
			edit: func(j *v1beta1.MxJob) {
				j.Spec.ReplicaSpecs = append(j.Spec.ReplicaSpecs, j.Spec.ReplicaSpecs[2])
			},
			want: []string{"spec.replicaSpecs[3].mxReplicaType: " + duplicate, "spec.replicaSpecs: " + forbidden},
		},
		// A job stored before psRootPort had to agree with mxjob-port stays suspendable.
		"suspending a stored job whose psRootPort and mxjob-port disagree": {
			old: func(j *v1beta1.MxJob) { withMxjobPort(ptr.To[int32](9091), 9000)(&j.Spec.ReplicaSpecs[0]) },
			edit: func(j *v1beta1.MxJob) {
				withMxjobPort(ptr.To[int32](9091), 9000)(&j.Spec.ReplicaSpecs[0])
				j.Spec.RunPolicy.Suspend = ptr.To(true)
			},
		},
		// Kueue sets a suspended job's scheduling directives on admission, in the patch that
		// resumes it, and restores them in the patch that suspends it.
		"a suspended job's node selector and tolerations may change as it resumes": {
			old: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) },
			edit: func(j *v1beta1.MxJob) {
				j.Spec.RunPolicy.Suspend = ptr.To(false)
				schedule(&j.Spec.ReplicaSpecs[2])
			},
		},
		"they may be restored as the job is suspended": {
			old:  func(j *v1beta1.MxJob) { schedule(&j.Spec.ReplicaSpecs[2]) },
			edit: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) },
		},
		"a running job's node selector may not change": {
			edit: func(j *v1beta1.MxJob) { schedule(&j.Spec.ReplicaSpecs[2]) },
			want: []string{"spec.replicaSpecs[2]: " + forbidden},
		},
		"a suspended job's image still may not change": {
			old: func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) },
			edit: func(j *v1beta1.MxJob) {
				j.Spec.RunPolicy.Suspend = ptr.To(true)
				schedule(&j.Spec.ReplicaSpecs[1])
				j.Spec.ReplicaSpecs[1].Template.Spec.Containers[0].Image = "other"
			},
			want: []string{"spec.replicaSpecs[1]: " + forbidden},
		},
		"a job being deleted may change anything": {
			edit: func(j *v1beta1.MxJob) {
				j.DeletionTimestamp = &metav1.Time{}
				j.Spec.ReplicaSpecs = nil
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			old, job := base(), base()
			if tc.old != nil {
				tc.old(old)
			}
			tc.edit(job)
			got := webhooktest.Keys(ValidateUpdate(old, job))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateUpdate() errors (-want +got):\n%s", diff)
			}
		})
	}
}

// schedule gives a replica spec's template what a Kueue admission adds.
func schedule(rs *v1beta1.ReplicaSpec) {
	t := rs.Template
	t.Labels = map[string]string{"kueue.x-k8s.io/podset": rs.MxReplicaType.Role()}
	t.Annotations = map[string]string{"kueue.x-k8s.io/workload": "w"}
	t.Spec.NodeSelector = map[string]string{"pool": "a"}
	t.Spec.Tolerations = []corev1.Toleration{{Key: "pool", Operator: corev1.TolerationOpExists}}
	t.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}
	t.Spec.Affinity = &corev1.Affinity{}
}

func TestWarnings(t *testing.T) {
	job := builders.MxJob("train").Local().Obj()
	if w := Warnings(job); len(w) != 0 {
		t.Fatalf("Warnings() = %v, want none", w)
	}
	job.Spec.ReplicaSpecs[0].Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	w := Warnings(job)
	if len(w) != 1 || !strings.Contains(w[0], "spec.replicaSpecs[0].template.spec.restartPolicy is ignored") {
		t.Fatalf("Warnings() = %v, want one naming the template restartPolicy", w)
	}
}
