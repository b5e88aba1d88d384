package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

func TestCertificatesFromTheRotator(t *testing.T) {
	var secret corev1.Secret
	k8s.MustGet(t, types.NamespacedName{Namespace: opts.Namespace, Name: opts.CertSecret}, &secret)
	for _, key := range []string{"ca.crt", "tls.crt", "tls.key"} {
		if len(secret.Data[key]) == 0 {
			t.Errorf("the rotator left %s empty in Secret %s", key, opts.CertSecret)
		}
	}
	// envtest installed its own CA; the rotator must have replaced it with the Secret's.
	k8s.CheckCABundles(t, mutatingConfig, validatingConfig, secret.Data["ca.crt"])
}

// wantInvalid checks that err is the webhook's Invalid error naming every field in fields.
func wantInvalid(t *testing.T, err error, fields ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the object; want it rejected naming %v", fields)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("got %v; want an Invalid error", err)
	}
	var got []string
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Details != nil {
		for _, c := range status.Status().Details.Causes {
			got = append(got, c.Field)
		}
	}
	if diff := cmp.Diff(fields, got); diff != "" {
		t.Errorf("fields named by the rejection (-want +got):\n%s\nerror: %v", diff, err)
	}
}

func TestInvalidMxJobIsRejectedNamingTheField(t *testing.T) {
	job := builders.MxJob("local-with-scheduler").Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj()
	err := k8s.Create(context.Background(), job)
	wantInvalid(t, err, "spec.replicaSpecs[1].mxReplicaType")
	if err != nil && !strings.Contains(err.Error(), "local mode runs only a WORKER, not a SCHEDULER; remove this replica spec or set spec.jobMode to dist") {
		t.Errorf("the message does not say what to do: %v", err)
	}
}

func TestEveryMxJobErrorAtOnce(t *testing.T) {
	job := builders.MxJob("three-problems").Local().
		EditReplica(0, func(rs *v1beta1.ReplicaSpec) {
			rs.Template.Spec.Containers[0].Name = "main"
			rs.RestartPolicy = v1beta1.RestartPolicyExitCode
		}).
		RunPolicy(func(rp *v1beta1.RunPolicy) { rp.BackoffLimit = ptr.To[int32](-1) }).
		Replica(v1beta1.ReplicaTypeWorker, 1).Obj()
	wantInvalid(t, k8s.Create(context.Background(), job),
		"spec.replicaSpecs[0].template.spec.containers",
		"spec.replicaSpecs[1].mxReplicaType",
		"spec.replicaSpecs",
		"spec.runPolicy.backoffLimit")
}

func TestMinimalMxJobGetsEveryDefault(t *testing.T) {
	job := &v1beta1.MxJob{
		ObjectMeta: metav1.ObjectMeta{Name: "minimal", Namespace: "default"},
		Spec:       v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}}},
	}
	k8s.MustCreate(t, job)
	var got v1beta1.MxJob
	k8s.MustGet(t, client.ObjectKeyFromObject(job), &got)
	tmpl := builders.PodTemplate("mxnet")
	tmpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "mxjob-port", ContainerPort: 9091, Protocol: corev1.ProtocolTCP}}
	want := v1beta1.MxJobSpec{
		JobMode: v1beta1.LocalMode,
		ReplicaSpecs: []v1beta1.ReplicaSpec{{
			MxReplicaType: v1beta1.ReplicaTypeWorker, Replicas: ptr.To[int32](1), PsRootPort: ptr.To[int32](9091),
			RestartPolicy: v1beta1.RestartPolicyNever, Template: tmpl,
		}},
		RunPolicy: v1beta1.RunPolicy{CleanPodPolicy: v1beta1.CleanPodPolicyRunning, Suspend: ptr.To(false)},
	}
	// The API server's own defaulting fills the pod template's resources and the like; compare ours.
	if diff := cmp.Diff(want, got.Spec, cmp.FilterPath(func(p cmp.Path) bool {
		return strings.Contains(p.GoString(), "Template.Spec.Containers") && !strings.Contains(p.GoString(), "Ports") &&
			!strings.HasSuffix(p.GoString(), ".Name") && !strings.HasSuffix(p.GoString(), ".Image")
	}, cmp.Ignore())); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
}

func TestMxJobSpecIsImmutableButSuspend(t *testing.T) {
	job := builders.MxJob("immutable").Dist(1, 2).Obj()
	k8s.MustCreate(t, job)
	wantInvalid(t, kubetest.TryPatch(k8s, job.DeepCopy(), func(j *v1beta1.MxJob) {
		j.Spec.ReplicaSpecs[2].Template.Spec.Containers[0].Image = "other:image"
	}), "spec.replicaSpecs[2]")
	if err := kubetest.TryPatch(k8s, job.DeepCopy(), func(j *v1beta1.MxJob) { j.Spec.RunPolicy.Suspend = ptr.To(true) }); err != nil {
		t.Fatalf("suspending the job was refused: %v", err)
	}
}

func TestMxJobPrinterColumns(t *testing.T) {
	ctx := context.Background()
	job := builders.MxJob("columns").Dist(2, 3).Obj()
	k8s.MustCreate(t, job)
	cs := kubernetes.NewForConfigOrDie(cfg)
	var table metav1.Table
	err := cs.RESTClient().Get().AbsPath("/apis/mxnet.mlkube.io/v1beta1/namespaces/default/mxjobs/columns").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(&table)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range table.ColumnDefinitions {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Mode", "State", "Workers", "Age"}, names); diff != "" {
		t.Fatalf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 || table.Rows[0].Cells[1] != "dist" || table.Rows[0].Cells[3] != int64(3) {
		t.Errorf("row = %v; want mode dist and 3 workers", table.Rows)
	}
}

func TestTransformWithoutAFormIsRejected(t *testing.T) {
	err := k8s.Create(context.Background(), builders.Transform("formless").Obj())
	wantInvalid(t, err, "spec")
	if err != nil && !strings.Contains(err.Error(), "exactly one of spec.runtime (an image), spec.podTemplate (a full pod) or spec.code") {
		t.Errorf("the message does not say what to do: %v", err)
	}
}

func TestMinimalTransformGetsItsDefaults(t *testing.T) {
	// The AIStore spelling "hpush://" must get through the CRD's enum: mutation runs before it.
	tr := builders.Transform("minimal").Runtime("mlkube/transformer-echo:dev").Comm("hpush://").Obj()
	k8s.MustCreate(t, tr)
	var got v1alpha1.Transform
	k8s.MustGet(t, client.ObjectKeyFromObject(tr), &got)
	want := v1alpha1.TransformSpec{
		Runtime:       &v1alpha1.RuntimeSpec{Image: "mlkube/transformer-echo:dev"},
		Communication: v1alpha1.CommHPush,
		InitTimeout:   &metav1.Duration{Duration: 45 * time.Second},
		ObjectTimeout: &metav1.Duration{Duration: 10 * time.Second},
		FailurePolicy: v1alpha1.FailureAbort,
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("stored spec (-want +got):\n%s", diff)
	}
}

func TestTransformImmutableFields(t *testing.T) {
	tr := builders.Transform("immutable").Runtime("mlkube/transformer-echo:dev").Obj()
	k8s.MustCreate(t, tr)
	wantInvalid(t, kubetest.TryPatch(k8s, tr.DeepCopy(), func(cur *v1alpha1.Transform) { cur.Spec.Communication = v1alpha1.CommWS }),
		"spec.communication")
	if err := kubetest.TryPatch(k8s, tr.DeepCopy(), func(cur *v1alpha1.Transform) { cur.Spec.Stopped = true }); err != nil {
		t.Fatalf("stopping the Transform was refused: %v", err)
	}
}

// The API server hands the webhook's Pod Security refusal to the user naming the template's
// field (issue 24, finding 4).
func TestHostNetworkTemplateIsRefusedNamingTheField(t *testing.T) {
	tr := builders.Transform("host-network").PodTemplate("mlkube/transformer-echo:dev").Obj()
	tr.Spec.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
	tr.Spec.PodTemplate.Spec.HostNetwork = true
	err := k8s.Create(context.Background(), tr)
	wantInvalid(t, err, "spec.podTemplate.spec.hostNetwork")
	if err != nil && !strings.Contains(err.Error(), "spec.podTemplate.spec.hostNetwork: Forbidden: the restricted Pod Security Standard forbids host namespaces") {
		t.Errorf("the message does not name the field and the rule: %v", err)
	}
	// The same template without it is admitted: the controller fills its securityContext.
	tr.Spec.PodTemplate.Spec.HostNetwork = false
	k8s.MustCreate(t, tr)
}

// A template that runs as a ServiceAccount is reviewed against the requester's rights through the
// real API server: the test's admin may create pods, so it is admitted.
func TestServiceAccountTemplateOfAnAdminIsAdmitted(t *testing.T) {
	tr := builders.Transform("service-account").PodTemplate("mlkube/transformer-echo:dev").Obj()
	tr.Spec.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
	tr.Spec.PodTemplate.Spec.ServiceAccountName = "default"
	k8s.MustCreate(t, tr)
}

// A user who may create Transforms but not pods cannot run a transformer as a ServiceAccount of
// the namespace: the webhook's SubjectAccessReview for the requester, through the real API
// server, says no, and the refusal names the field.
func TestServiceAccountTemplateNeedsTheRightToCreatePods(t *testing.T) {
	ctx := context.Background()
	bind(t, "default", "mallory", onlyCreate(t, "transforms"))
	mallory := impersonate(t, "mallory")
	tr := builders.Transform("borrowed-account").PodTemplate("mlkube/transformer-echo:dev").Obj()
	tr.Spec.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
	tr.Spec.PodTemplate.Spec.ServiceAccountName = "default"
	err := mallory.Create(ctx, tr)
	wantInvalid(t, err, "spec.podTemplate.spec.serviceAccountName")
	if err != nil && !strings.Contains(err.Error(), "mallory lacks it") {
		t.Errorf("the refusal does not name the requester: %v", err)
	}
	// Without the ServiceAccount, mallory's Transform is admitted: the refusal was the review's.
	tr.Spec.PodTemplate.Spec.ServiceAccountName = ""
	if err := mallory.Create(ctx, tr); err != nil {
		t.Fatalf("mallory's plain Transform: %v", err)
	}
}
