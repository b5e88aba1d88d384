package mxjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

func TestDefault(t *testing.T) {
	mxnetPort := corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 9091, Protocol: corev1.ProtocolTCP}
	defaulted := func(t v1beta1.ReplicaType, replicas int32, ports ...corev1.ContainerPort) v1beta1.ReplicaSpec {
		tmpl := builders.PodTemplate("mxnet")
		tmpl.Spec.Containers[0].Ports = ports
		return v1beta1.ReplicaSpec{MxReplicaType: t, Replicas: ptr.To(replicas), PsRootPort: ptr.To[int32](9091),
			RestartPolicy: v1beta1.RestartPolicyNever, Template: tmpl}
	}
	withPorts := func(rs v1beta1.ReplicaSpec, ports ...corev1.ContainerPort) v1beta1.ReplicaSpec {
		rs.Template = builders.PodTemplate("mxnet")
		rs.Template.Spec.Containers[0].Ports = ports
		return rs
	}
	withRootPort := func(rs v1beta1.ReplicaSpec, port int32) v1beta1.ReplicaSpec {
		rs.PsRootPort = ptr.To(port)
		return rs
	}
	runPolicy := v1beta1.RunPolicy{CleanPodPolicy: v1beta1.CleanPodPolicyRunning, Suspend: ptr.To(false)}
	cases := map[string]struct {
		spec v1beta1.MxJobSpec
		want v1beta1.MxJobSpec
	}{
		"bare replica becomes a local worker with every default": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.LocalMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{defaulted(v1beta1.ReplicaTypeWorker, 1, mxnetPort)}},
		},
		"a server makes the mode dist": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{
				{MxReplicaType: v1beta1.ReplicaTypeServer, Template: builders.PodTemplate("mxnet")}}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{defaulted(v1beta1.ReplicaTypeServer, 1, mxnetPort)}},
		},
		"a scheduler makes the mode dist": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{
				{MxReplicaType: v1beta1.ReplicaTypeScheduler, Template: builders.PodTemplate("mxnet")}}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{defaulted(v1beta1.ReplicaTypeScheduler, 1, mxnetPort)}},
		},
		"explicit values are kept": {
			spec: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, SuccessPolicy: v1beta1.SuccessPolicyAllWorkers,
				RunPolicy: v1beta1.RunPolicy{CleanPodPolicy: v1beta1.CleanPodPolicyAll, Suspend: ptr.To(true)},
				ReplicaSpecs: []v1beta1.ReplicaSpec{{MxReplicaType: v1beta1.ReplicaTypeWorker, Replicas: ptr.To[int32](4),
					PsRootPort: ptr.To[int32](7000), RestartPolicy: v1beta1.RestartPolicyExitCode, Template: builders.PodTemplate("mxnet")}}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, SuccessPolicy: v1beta1.SuccessPolicyAllWorkers,
				RunPolicy: v1beta1.RunPolicy{CleanPodPolicy: v1beta1.CleanPodPolicyAll, Suspend: ptr.To(true)},
				ReplicaSpecs: []v1beta1.ReplicaSpec{func() v1beta1.ReplicaSpec {
					rs := defaulted(v1beta1.ReplicaTypeWorker, 4, corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 7000, Protocol: corev1.ProtocolTCP})
					rs.PsRootPort, rs.RestartPolicy = ptr.To[int32](7000), v1beta1.RestartPolicyExitCode
					return rs
				}()}},
		},
		"a declared mxjob-port is kept and becomes psRootPort": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{
				withPorts(v1beta1.ReplicaSpec{}, corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 1234})}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.LocalMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{withRootPort(defaulted(v1beta1.ReplicaTypeWorker, 1,
					corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 1234}), 1234)}},
		},
		"the scheduler's declared mxjob-port becomes its psRootPort, so DMLC_PS_ROOT_PORT agrees": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{withPorts(v1beta1.ReplicaSpec{MxReplicaType: v1beta1.ReplicaTypeScheduler},
				corev1.ContainerPort{Name: "metrics", ContainerPort: 8080},
				corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 9000, Protocol: corev1.ProtocolTCP})}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{withRootPort(defaulted(v1beta1.ReplicaTypeScheduler, 1,
					corev1.ContainerPort{Name: "metrics", ContainerPort: 8080},
					corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 9000, Protocol: corev1.ProtocolTCP}), 9000)}},
		},
		"a declared psRootPort wins over no mxjob-port": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{withRootPort(withPorts(v1beta1.ReplicaSpec{},
				corev1.ContainerPort{Name: "metrics", ContainerPort: 8080}), 7000)}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.LocalMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{withRootPort(defaulted(v1beta1.ReplicaTypeWorker, 1,
					corev1.ContainerPort{Name: "metrics", ContainerPort: 8080},
					corev1.ContainerPort{Name: "mxjob-port", ContainerPort: 7000, Protocol: corev1.ProtocolTCP}), 7000)}},
		},
		"an mxjob-port of another container is not the mxnet container's": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{func() v1beta1.ReplicaSpec {
				rs := v1beta1.ReplicaSpec{Template: builders.PodTemplate("mxnet")}
				rs.Template.Spec.Containers = append(rs.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "x",
					Ports: []corev1.ContainerPort{{Name: "mxjob-port", ContainerPort: 9000}}})
				return rs
			}()}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.LocalMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{func() v1beta1.ReplicaSpec {
					rs := defaulted(v1beta1.ReplicaTypeWorker, 1, mxnetPort)
					rs.Template.Spec.Containers = append(rs.Template.Spec.Containers, corev1.Container{Name: "sidecar", Image: "x",
						Ports: []corev1.ContainerPort{{Name: "mxjob-port", ContainerPort: 9000}}})
					return rs
				}()}},
		},
		"no template: nothing to add a port to": {
			spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{{}}},
			want: v1beta1.MxJobSpec{JobMode: v1beta1.LocalMode, RunPolicy: runPolicy,
				ReplicaSpecs: []v1beta1.ReplicaSpec{func() v1beta1.ReplicaSpec {
					rs := defaulted(v1beta1.ReplicaTypeWorker, 1)
					rs.Template = nil
					return rs
				}()}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			job := &v1beta1.MxJob{Spec: tc.spec}
			Default(job)
			if diff := cmp.Diff(tc.want, job.Spec); diff != "" {
				t.Errorf("Default() (-want +got):\n%s", diff)
			}
			again := job.DeepCopy()
			Default(again)
			if diff := cmp.Diff(job, again); diff != "" {
				t.Errorf("Default() is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestQueuedByKueue(t *testing.T) {
	queued := builders.MxJob("q").Local().Queue("team-a").Obj()
	queued.Spec.RunPolicy.Suspend = ptr.To(false)
	QueuedByKueue(queued)
	if !queued.Spec.RunPolicy.Suspended() {
		t.Error("a job with a queue (even one asking to run) is not created suspended")
	}
	plain := builders.MxJob("p").Local().Obj()
	QueuedByKueue(plain)
	if plain.Spec.RunPolicy.Suspend != nil {
		t.Errorf("a job without a queue got suspend %v", *plain.Spec.RunPolicy.Suspend)
	}
}
