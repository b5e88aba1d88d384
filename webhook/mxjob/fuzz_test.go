package mxjob

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// generateJob makes a fuzzed job: a valid local, dist or bare job with up to three fields
// refilled at random.
func generateJob(data []byte) *v1beta1.MxJob {
	bases := []func() *v1beta1.MxJob{
		func() *v1beta1.MxJob { return builders.MxJob("local").Local().Obj() },
		func() *v1beta1.MxJob { return builders.MxJob("dist").Dist(2, 3).Obj() },
		func() *v1beta1.MxJob {
			return &v1beta1.MxJob{Spec: v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}}}}
		},
	}
	fields := func(j *v1beta1.MxJob) []any {
		ptrs := []any{&j.ObjectMeta, &j.Spec.JobMode, &j.Spec.SuccessPolicy, &j.Spec.RunPolicy, &j.Spec.ReplicaSpecs}
		for i := range j.Spec.ReplicaSpecs {
			rs := &j.Spec.ReplicaSpecs[i]
			ptrs = append(ptrs, &rs.MxReplicaType, &rs.Replicas, &rs.PsRootPort, &rs.RestartPolicy, &rs.Template)
			if rs.Template != nil {
				ptrs = append(ptrs, &rs.Template.Spec.Containers[0].Ports, &rs.Template.Spec.Containers[0].Env)
			}
		}
		return ptrs
	}
	return webhooktest.Generate(data, bases, fields,
		webhooktest.Pick[v1beta1.JobMode]("", v1beta1.LocalMode, v1beta1.DistMode, "cluster"),
		webhooktest.Pick[v1beta1.ReplicaType]("", v1beta1.ReplicaTypeScheduler, v1beta1.ReplicaTypeServer, v1beta1.ReplicaTypeWorker, "EVAL"),
		webhooktest.Pick[v1beta1.RestartPolicy]("", v1beta1.RestartPolicyNever, v1beta1.RestartPolicyExitCode, "Sometimes"),
		webhooktest.Pick[v1beta1.CleanPodPolicy]("", v1beta1.CleanPodPolicyAll, v1beta1.CleanPodPolicyNone, "Some"),
		webhooktest.Pick[v1beta1.SuccessPolicy]("", v1beta1.SuccessPolicyAllWorkers, "Any"),
		// Ports named mxjob-port reach the rule that psRootPort agrees with the declared port.
		func(p *corev1.ContainerPort, c randfill.Continue) {
			p.Name = []string{v1beta1.DefaultPortName, "metrics", ""}[c.Intn(3)]
			c.Fill(&p.ContainerPort)
		},
	)
}

// TestGeneratedJobsMixValidAndInvalid guards the fuzz target against going vacuous: its
// properties about valid jobs need valid jobs, and its rules need invalid ones.
func TestGeneratedJobsMixValidAndInvalid(t *testing.T) {
	share := webhooktest.ValidShare(2000, generateJob, func(j *v1beta1.MxJob) bool { return len(ValidateCreate(j)) == 0 })
	t.Logf("valid share %.2f", share)
	if share < 0.2 || share > 0.8 {
		t.Fatalf("%.0f%% of generated jobs are valid; want between 20%% and 80%%", share*100)
	}
}

// FuzzMxJobAdmission checks, on random jobs, that the rules never panic, that defaulting is
// idempotent and survives the API server's JSON round trip, that a valid job stays valid once
// defaulted, and that what defaulting adds never counts as an immutable-field change.
func FuzzMxJobAdmission(f *testing.F) {
	for _, seed := range []string{"", "local", "dist", "a longer seed for other shapes", "\x00\xff"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		job := generateJob(data)
		_ = Warnings(job)
		webhooktest.CheckProperties(t, job, webhooktest.Rules[*v1beta1.MxJob]{
			New:      func() *v1beta1.MxJob { return &v1beta1.MxJob{} },
			DeepCopy: func(o *v1beta1.MxJob) *v1beta1.MxJob { return o.DeepCopy() },
			Default:  Default, Create: ValidateCreate, Update: ValidateUpdate,
			Spec:      func(o *v1beta1.MxJob) any { return o.Spec },
			Immutable: func(old, obj *v1beta1.MxJob) field.ErrorList { return validateImmutable(&old.Spec, &obj.Spec) },
		})
	})
}
