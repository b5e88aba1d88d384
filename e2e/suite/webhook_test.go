package suite

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
)

func TestManagerReadyWithCertControllerCertificates(t *testing.T) {
	var dep appsv1.Deployment
	k8s.MustGet(t, client.ObjectKey{Namespace: systemNamespace, Name: managerName}, &dep)
	if dep.Status.ReadyReplicas < 1 {
		t.Fatalf("the manager has %d ready replicas", dep.Status.ReadyReplicas)
	}
	var secret corev1.Secret
	k8s.MustGet(t, client.ObjectKey{Namespace: systemNamespace, Name: "mlkube-webhook-cert"}, &secret)
	ca, serving := parseCert(t, secret.Data["ca.crt"]), parseCert(t, secret.Data["tls.crt"])
	if err := serving.CheckSignatureFrom(ca); err != nil {
		t.Errorf("the serving certificate is not signed by the Secret's CA: %v", err)
	}
	if !slices.Contains(serving.DNSNames, "mlkube-webhook-service.mlkube-system.svc") {
		t.Errorf("the serving certificate names %v, not the webhook Service", serving.DNSNames)
	}
	if ca.Subject.CommonName != "mlkube-ca" {
		t.Errorf("CA common name %q; want the rotator's mlkube-ca", ca.Subject.CommonName)
	}
	k8s.CheckCABundles(t, "mlkube-mutating-webhook-configuration", "mlkube-validating-webhook-configuration", secret.Data["ca.crt"])
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("no PEM certificate in %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestWebhooksThroughTheAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)

	err := k8s.Create(ctx, builders.MxJob("local-with-scheduler").Namespace(ns).Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicaSpecs[1].mxReplicaType") {
		t.Errorf("an invalid MxJob got %v; want Invalid naming spec.replicaSpecs[1].mxReplicaType", err)
	}

	job := builders.MxJob("defaults").Namespace(ns).Obj()
	job.Spec.ReplicaSpecs = []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}}
	job.Spec.ReplicaSpecs[0].Template.Spec.Containers[0].Image = "mlkube/mxjob-workload:dev"
	if err := k8s.Create(ctx, job); err != nil {
		t.Fatalf("a valid MxJob was refused: %v", err)
	}
	var stored v1beta1.MxJob
	k8s.MustGet(t, client.ObjectKeyFromObject(job), &stored)
	rs := stored.Spec.ReplicaSpecs[0]
	if stored.Spec.JobMode != v1beta1.LocalMode || rs.MxReplicaType != v1beta1.ReplicaTypeWorker || *rs.Replicas != 1 ||
		*rs.PsRootPort != 9091 || rs.RestartPolicy != v1beta1.RestartPolicyNever ||
		stored.Spec.RunPolicy.CleanPodPolicy != v1beta1.CleanPodPolicyRunning {
		t.Errorf("stored MxJob lacks its defaults: %+v", stored.Spec)
	}

	err = k8s.Create(ctx, builders.Transform("formless").Namespace(ns).Obj())
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "exactly one of spec.runtime") {
		t.Errorf("a formless Transform got %v; want Invalid saying to pick one form", err)
	}
	tr := builders.Transform("defaults").Namespace(ns).Runtime("mlkube/transformer-echo:dev").Comm("ws://").Obj()
	if err := k8s.Create(ctx, tr); err != nil {
		t.Fatalf("a valid Transform was refused: %v", err)
	}
	var storedTr v1alpha1.Transform
	k8s.MustGet(t, client.ObjectKeyFromObject(tr), &storedTr)
	s := storedTr.Spec
	if s.Communication != v1alpha1.CommWS || s.InitTimeout == nil || s.InitTimeout.Duration.String() != "45s" ||
		s.ObjectTimeout == nil || s.ObjectTimeout.Duration.String() != "10s" || s.FailurePolicy != v1alpha1.FailureAbort {
		t.Errorf("stored Transform lacks its defaults: %+v", s)
	}
}

// TestFailurePolicyFailWithoutTheManager: with no webhook to call, the API server must refuse
// creates rather than store unchecked objects, and accept them again once the manager is back.
func TestFailurePolicyFailWithoutTheManager(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	scaleManager(t, 0)
	t.Cleanup(func() { scaleManager(t, managerReplicas) })

	err := k8s.Create(ctx, builders.MxJob("while-down").Namespace(ns).Local().Obj())
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "mmxjob.mlkube.io"`) {
		t.Fatalf("creating an MxJob without the manager got %v; want a refusal from the webhook call", err)
	}
	err = k8s.Create(ctx, builders.Transform("while-down").Namespace(ns).Runtime("x").Obj())
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "mtransform.mlkube.io"`) {
		t.Fatalf("creating a Transform without the manager got %v; want a refusal from the webhook call", err)
	}

	scaleManager(t, managerReplicas)
	// The API server learns the new endpoint through its own watch: poll until it does.
	k8s.Eventually(t, "creates to succeed again", func(ctx context.Context) (bool, error) {
		err := k8s.Create(ctx, builders.MxJob("after-return").Namespace(ns).Local().Obj())
		return err == nil, err
	})
}

// TestLosingAManagerPodRefusesNoCreate: with two manager replicas, deleting one while creates
// stream in refuses none of them; every create goes through both webhooks (server-side dry run,
// so nothing is left to clean up).
func TestLosingAManagerPodRefusesNoCreate(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	managers, err := managerPods(ctx)
	if err != nil || len(managers) != managerReplicas {
		t.Fatalf("manager pods: %d (%v), want %d", len(managers), err, managerReplicas)
	}
	t.Cleanup(func() { scaleManager(t, managerReplicas) })
	// Creates go on until the deleted pod is gone for good (and at least minCreates ran), so the
	// whole of its termination falls within them.
	const minCreates, maxCreates = 200, 5000
	var refused []string
	gone := false
	i := 0
	for ; i < maxCreates && (i < minCreates || !gone); i++ {
		if i == 20 {
			if err := k8s.Delete(ctx, &managers[0]); err != nil {
				t.Fatal(err)
			}
		}
		var obj client.Object = builders.MxJob(fmt.Sprintf("stream-%d", i)).Namespace(ns).Local().Obj()
		if i%2 == 1 {
			obj = builders.Transform(fmt.Sprintf("stream-%d", i)).Namespace(ns).Runtime("x").Obj()
		}
		if err := k8s.Create(ctx, obj, client.DryRunAll); err != nil {
			refused = append(refused, fmt.Sprintf("create %d: %v", i, err))
		}
		if i > 20 && i%10 == 0 {
			err := k8s.Get(ctx, client.ObjectKeyFromObject(&managers[0]), &corev1.Pod{})
			gone = apierrors.IsNotFound(err)
		}
	}
	if !gone {
		t.Fatalf("manager pod %s still there after %d creates", managers[0].Name, i)
	}
	if len(refused) > 0 {
		t.Fatalf("%d of %d creates refused while manager pod %s went away, first: %s", len(refused), i, managers[0].Name, refused[0])
	}
	t.Logf("%d creates, none refused, while manager pod %s terminated", i, managers[0].Name)
}
