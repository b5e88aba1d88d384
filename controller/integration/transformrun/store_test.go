package transformrun

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestTransformRunFromAStoreSendsTheStoreAndTheNodes: every node's share of a run from an
// ObjectStore into another carries the stores' specs as the API server holds it (never its keys, which the
// agents read themselves) and the run's nodes, among which the agents split the store's objects.
func TestTransformRunFromAStoreSendsTheStoreAndTheNodes(t *testing.T) {
	a, b := startAgent(t, "store-a", 5, 5), startAgent(t, "store-b", 5, 5)
	ns := testNamespace(t, a, b)
	store := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: "raw", Namespace: ns}, Spec: v1alpha1.ObjectStoreSpec{
		Endpoint: "https://s3.example.com", Region: "eu-west-1", Bucket: "team-raw", Addressing: v1alpha1.AddressingPath,
		Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: v1alpha1.ObjectStoreSecretName, AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey"},
	}}
	k8s.MustCreate(t, store)
	out := &v1alpha1.ObjectStore{ObjectMeta: metav1.ObjectMeta{Name: "processed", Namespace: ns}, Spec: *store.Spec.DeepCopy()}
	out.Spec.Bucket = "team-processed"
	k8s.MustCreate(t, out)
	run := createRun(t, ns, func(s *v1alpha1.TransformRunSpec) {
		s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"}
		s.Destination = v1alpha1.RunDestination{Store: "processed", Prefix: "out"}
	})
	waitPhase(t, run, v1alpha1.RunSucceeded)
	for _, ag := range []*fakeAgent{a, b} {
		spec := ag.lastSpec()
		want := &wire.RunStore{Name: "raw", Spec: store.Spec}
		if diff := cmp.Diff(want, spec.SourceStore); diff != "" {
			t.Errorf("%s got the store (-want +got):\n%s", ag, diff)
		}
		if diff := cmp.Diff(&wire.RunStore{Name: "processed", Spec: out.Spec}, spec.DestinationStore); diff != "" {
			t.Errorf("%s got the destination store (-want +got):\n%s", ag, diff)
		}
		if diff := cmp.Diff([]string{"store-a", "store-b"}, spec.Nodes); diff != "" {
			t.Errorf("%s got the nodes (-want +got):\n%s", ag, diff)
		}
	}
}

// TestTransformRunFromAMissingStoreFails: a run whose store does not exist fails, naming it and
// saying what to do, without any agent being sent a share.
func TestTransformRunFromAMissingStoreFails(t *testing.T) {
	a := startAgent(t, "nostore-a", 5, 5)
	ns := testNamespace(t, a)
	run := createRun(t, ns, func(s *v1alpha1.TransformRunSpec) { s.Source = v1alpha1.RunSource{Store: "gone", Prefix: "images"} })
	got := waitPhase(t, run, v1alpha1.RunFailed)
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.RunConditionFailed)
	if c == nil || !strings.Contains(c.Message, "spec.source.store names ObjectStore gone, which namespace "+ns+" does not have; create it") {
		t.Errorf("conditions %s; want Failed naming the missing ObjectStore", conditionMessages(got))
	}
	if puts, _, _ := a.calls(); puts != 0 {
		t.Errorf("%s was sent %d shares of a run whose store does not exist", a, puts)
	}
}
