package objectstore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

var alice = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
	Namespace: "team-a",
	UserInfo:  authnv1.UserInfo{Username: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authnv1.ExtraValue{"scope": {"x"}}},
}}

// readsKeys answers as RBAC would for a user who may (or may not) get the Secret of store keys.
func readsKeys(may bool) func(authzv1.SubjectAccessReviewSpec) (bool, error) {
	return func(s authzv1.SubjectAccessReviewSpec) (bool, error) {
		a := s.ResourceAttributes
		return may && a.Group == "" && a.Resource == "secrets" && a.Verb == "get" && a.Name == v1alpha1.ObjectStoreSecretName, nil
	}
}

// The review asks exactly whether the requester, with their groups, UID and extra, may get the
// Secret of store keys in the request's namespace, in the core group.
func TestCreatorAccessAsksForTheSecret(t *testing.T) {
	c, reviews := webhooktest.Reviewer(readsKeys(true))
	s := store(nil)
	s.Namespace = "" // the request's namespace is the API server's word
	if errs, err := CreatorAccess(context.Background(), c, alice, s); err != nil || len(errs) > 0 {
		t.Fatalf("a user who may read the keys: %v %v", errs, err)
	}
	want := []authzv1.SubjectAccessReviewSpec{{
		User: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authzv1.ExtraValue{"scope": {"x"}},
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: "team-a", Verb: "get", Group: "", Resource: "secrets", Name: "mlkube-object-stores"},
	}}
	if diff := cmp.Diff(want, *reviews); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
}

func TestCreatorWhoMayNotReadTheKeysIsRefused(t *testing.T) {
	c, _ := webhooktest.Reviewer(readsKeys(false))
	errs, err := CreatorAccess(context.Background(), c, alice, store(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := webhooktest.Keys(errs); !cmp.Equal(got, []string{"spec.credentials.secretName: Forbidden"}) {
		t.Fatalf("errors %v; want the Secret's field forbidden", got)
	}
	msg := webhooktest.Messages(errs)
	for _, w := range []string{"alice may not get secrets mlkube-object-stores in namespace team-a (no RBAC rule)", "node agents would sign its requests", "edit and admin", "make the store anonymous"} {
		if !strings.Contains(msg, w) {
			t.Errorf("the refusal does not say %q:\n%s", w, msg)
		}
	}
}

// An anonymous store uses no keys, so it asks nothing.
func TestAnonymousStoreAsksNothing(t *testing.T) {
	c, reviews := webhooktest.Reviewer(readsKeys(false))
	errs, err := CreatorAccess(context.Background(), c, alice, store(func(s *v1alpha1.ObjectStore) { s.Spec.Anonymous = true }))
	if err != nil || len(errs) > 0 || len(*reviews) > 0 {
		t.Fatalf("anonymous: errors %v, %v, reviews %v; want none", errs, err, *reviews)
	}
}

// No answer is no admission: the webhook fails closed.
func TestCreatorReviewFailureIsAnError(t *testing.T) {
	c, _ := webhooktest.Reviewer(func(authzv1.SubjectAccessReviewSpec) (bool, error) { return true, errors.New("connection refused") })
	_, err := CreatorAccess(context.Background(), c, alice, store(nil))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "alice may get secrets mlkube-object-stores") {
		t.Fatalf("got %v; want the review's failure, naming the requester and the right", err)
	}
}

// Updates are reviewed too: whoever changes a store's endpoint points the agents, with its keys,
// somewhere new.
func TestUpdatesAreReviewed(t *testing.T) {
	c, reviews := webhooktest.Reviewer(readsKeys(false))
	r := NewRules(c)
	ctx := admission.NewContextWithRequest(context.Background(), alice)
	_, err := r.ValidateUpdate(ctx, store(nil), store(func(s *v1alpha1.ObjectStore) { s.Spec.Endpoint = "https://elsewhere.example.com" }))
	if err == nil || !strings.Contains(err.Error(), "may not get secrets mlkube-object-stores") || len(*reviews) != 1 {
		t.Fatalf("an update by a user who may not read the keys: %v (%d reviews); want it refused after one review", err, len(*reviews))
	}
}
