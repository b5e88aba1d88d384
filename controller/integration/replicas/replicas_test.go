package replicas

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// TestTwoReplicas starts two managers at once on an empty certificate Secret, so their rotators
// race to create the CA, and checks: both turn Ready, exactly one leads, the webhook
// configurations carry the Secret's one CA and both serve under it, and creates pass both
// webhooks. Then the leader gets SIGTERM, as a deleted pod does: the other leads, runs the
// controllers, and creates still pass.
func TestTwoReplicas(t *testing.T) {
	emptySecret(t)
	a, b := startReplica(t, "a"), startReplica(t, "b")
	serve(t, webhookAddr, a, b)
	waitReady(t, a, b)
	leader := leaderOf(t, a, b)
	follower := map[*replica]*replica{a: b, b: a}[leader]
	ca := checkOneCA(t, a, b)
	holder := leaseHolder(t)
	wantAdmitted(t, "before-stop")

	leader.stop(t)
	if got := leaderOf(t, follower); got != follower {
		t.Fatalf("replica %s leads; want %s", got.name, follower.name)
	}
	if h := leaseHolder(t); h == holder {
		t.Errorf("the lease is still held by %s, the stopped replica", h)
	}
	if got := checkOneCA(t, follower); string(got) != string(ca) {
		t.Error("the CA changed when the leader stopped")
	}
	wantAdmitted(t, "after-stop")
}

// emptySecret leaves the certificate Secret as the bundle ships it, so every run (-count) starts
// with the rotators' race for the CA.
func emptySecret(t *testing.T) {
	t.Helper()
	var secret corev1.Secret
	k8s.MustGet(t, types.NamespacedName{Namespace: opts.Namespace, Name: opts.CertSecret}, &secret)
	secret.Data = nil
	if err := k8s.Update(context.Background(), &secret); err != nil {
		t.Fatal(err)
	}
}

func waitReady(t *testing.T, replicas ...*replica) {
	t.Helper()
	k8s.Eventually(t, "every replica Ready", func(context.Context) (bool, error) {
		for _, r := range replicas {
			if !r.running() {
				return false, kubetest.Stop(fmt.Errorf("replica %s exited", r.name))
			}
			if !r.ready() {
				return false, nil
			}
		}
		return true, nil
	})
}

// leaderOf waits for one of replicas to lead and fails the test unless exactly one does.
func leaderOf(t *testing.T, replicas ...*replica) *replica {
	t.Helper()
	var leaders []*replica
	k8s.Eventually(t, "a leader", func(context.Context) (bool, error) {
		leaders = nil
		for _, r := range replicas {
			ok, err := r.leads()
			if err != nil {
				return false, err
			}
			if ok {
				leaders = append(leaders, r)
			}
		}
		return len(leaders) > 0, nil
	})
	if len(leaders) != 1 {
		t.Fatalf("%d replicas lead at once; want exactly one", len(leaders))
	}
	return leaders[0]
}

func leaseHolder(t *testing.T) string {
	t.Helper()
	var l coordinationv1.Lease
	k8s.MustGet(t, types.NamespacedName{Namespace: opts.Namespace, Name: opts.LeaderElectionID}, &l)
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

// checkOneCA checks that the webhook configurations carry the certificate Secret's CA and that
// every replica serves a certificate the API server verifies under it, and returns that CA.
func checkOneCA(t *testing.T, replicas ...*replica) []byte {
	t.Helper()
	var secret corev1.Secret
	k8s.MustGet(t, types.NamespacedName{Namespace: opts.Namespace, Name: opts.CertSecret}, &secret)
	ca := secret.Data["ca.crt"]
	k8s.CheckCABundles(t, mutatingConfig, validatingConfig, ca)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("the certificate Secret holds no CA")
	}
	for _, r := range replicas {
		// The name the webhook configurations dial (envtest's localhost), as the API server does.
		conn, err := tls.Dial("tcp", r.webhookAddr, &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Errorf("replica %s serves a certificate the webhook configurations' CA does not verify: %v", r.name, err)
			continue
		}
		conn.Close()
	}
	return ca
}

// wantAdmitted creates a minimal MxJob, which the mutating webhook must complete, and an invalid
// one, which the validating webhook must refuse, then waits for the leader's controller to make
// the job's pod. Names are generated, so runs (-count) do not collide.
func wantAdmitted(t *testing.T, name string) {
	t.Helper()
	job := &v1beta1.MxJob{
		ObjectMeta: metav1.ObjectMeta{GenerateName: name + "-", Namespace: "default"},
		Spec:       v1beta1.MxJobSpec{ReplicaSpecs: []v1beta1.ReplicaSpec{{Template: builders.PodTemplate("mxnet")}}},
	}
	k8s.MustCreate(t, job)
	if job.Spec.JobMode != v1beta1.LocalMode {
		t.Errorf("job %s stored with mode %q; the mutating webhook sets %q", job.Name, job.Spec.JobMode, v1beta1.LocalMode)
	}
	bad := builders.MxJob("").Local().Replica(v1beta1.ReplicaTypeScheduler, 1).Obj()
	bad.GenerateName = name + "-invalid-"
	if err := k8s.Create(context.Background(), bad); !apierrors.IsInvalid(err) {
		t.Errorf("creating a local job with a SCHEDULER: %v; want the validating webhook's Invalid", err)
	}
	k8s.WaitForPods(t, "the leader's controller to make job "+job.Name+"'s worker pod", job, 1)
}
