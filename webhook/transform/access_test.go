package transform

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// reviewer answers every SubjectAccessReview with allowed (or err), and keeps the reviews it got.
func reviewer(allowed bool, err error) (client.Client, *[]authzv1.SubjectAccessReviewSpec) {
	return webhooktest.Reviewer(func(authzv1.SubjectAccessReviewSpec) (bool, error) { return allowed, err })
}

var alice = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
	Namespace: "team-a",
	UserInfo:  authnv1.UserInfo{Username: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authnv1.ExtraValue{"scope": {"x"}}},
}}

func TestServiceAccountNeedsTheRightToCreatePods(t *testing.T) {
	sa := templated(func(s *corev1.PodSpec) { s.ServiceAccountName = "deployer" })
	c, reviews := reviewer(false, nil)
	errs, err := ServiceAccountAccess(context.Background(), c, alice, sa)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{tmpl + "serviceAccountName: " + forbidden}, webhooktest.Keys(errs)); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if msg := webhooktest.Messages(errs); !strings.Contains(msg, "alice lacks it (no RBAC rule)") || !strings.Contains(msg, "namespace team-a") {
		t.Errorf("the refusal does not say who lacks what: %s", msg)
	}
	want := []authzv1.SubjectAccessReviewSpec{{
		User: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authzv1.ExtraValue{"scope": {"x"}},
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: "team-a", Verb: "create", Resource: "pods"},
	}}
	if diff := cmp.Diff(want, *reviews); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}

	c, _ = reviewer(true, nil)
	if errs, err := ServiceAccountAccess(context.Background(), c, alice, sa); err != nil || len(errs) > 0 {
		t.Errorf("a requester who may create pods: %v %v", errs, err)
	}
}

func TestEveryWayToAServiceAccountIsReviewed(t *testing.T) {
	cases := map[string]struct {
		edit func(*corev1.PodSpec)
		want []string
	}{
		"nothing":         {func(*corev1.PodSpec) {}, nil},
		"automount false": {func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = ptr.To(false) }, nil},
		"automount true": {func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = ptr.To(true) },
			[]string{tmpl + "automountServiceAccountToken: " + forbidden}},
		"deprecated serviceAccount": {func(s *corev1.PodSpec) { s.DeprecatedServiceAccount = "deployer" },
			[]string{tmpl + "serviceAccount: " + forbidden}},
		"projected token": {func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "t", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}}
		}, []string{tmpl + "volumes[0].projected.sources[0].serviceAccountToken: " + forbidden}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, reviews := reviewer(false, nil)
			errs, err := ServiceAccountAccess(context.Background(), c, alice, templated(tc.edit))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, webhooktest.Keys(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if (len(*reviews) > 0) != (tc.want != nil) {
				t.Errorf("%d reviews; want one only when the template asks for a ServiceAccount", len(*reviews))
			}
		})
	}
}

// No answer is no admission: the webhook fails closed.
func TestServiceAccountReviewFailureIsAnError(t *testing.T) {
	c, _ := reviewer(true, errors.New("connection refused"))
	_, err := ServiceAccountAccess(context.Background(), c, alice, templated(func(s *corev1.PodSpec) { s.ServiceAccountName = "x" }))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("got %v; want the review's failure, naming the requester", err)
	}
}
