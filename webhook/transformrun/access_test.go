package transformrun

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/kubetest"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

var alice = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
	Namespace: "team-a",
	UserInfo:  authnv1.UserInfo{Username: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authnv1.ExtraValue{"scope": {"x"}}},
}}

// rights answers a review as RBAC would for a user holding exactly the rights named
// "VERB RESOURCE[ NAME]", e.g. "use transforms md5", "get objects".
func rights(held ...string) func(authzv1.SubjectAccessReviewSpec) (bool, error) {
	return func(s authzv1.SubjectAccessReviewSpec) (bool, error) {
		a := s.ResourceAttributes
		key := strings.TrimSpace(a.Verb + " " + a.Resource + " " + a.Name)
		return slices.Contains(held, key), nil
	}
}

// everything a pipeline "upper>>md5" run of a prefix needs.
var allRights = []string{"use transforms upper", "use transforms md5", "get objects", "list objects", "create objects"}

func without(missing string) []string {
	return slices.DeleteFunc(slices.Clone(allRights), func(r string) bool { return r == missing })
}

// TestCreatorNeedsEveryRightTheRunUses: each right the run would exercise through the agents,
// when missing, refuses the run on the field that needs it, naming the right and a role that
// grants it.
func TestCreatorNeedsEveryRightTheRunUses(t *testing.T) {
	pipeline := func(s *spec) { s.Transform = "upper>>md5" }
	cases := map[string]struct {
		edit     func(*spec)
		held     []string
		want     []string // field: type
		wantText []string
	}{
		"every right": {edit: pipeline, held: allRights},
		"use of the first stage": {edit: pipeline, held: without("use transforms upper"),
			want:     []string{"spec.transform: " + forbidden},
			wantText: []string{"alice may not use transforms.etl.mlkube.io upper in namespace team-a (no RBAC rule)", "ClusterRole mlkube-datapath-user", "built-in edit and admin"}},
		"use of the second stage": {edit: pipeline, held: without("use transforms md5"),
			want:     []string{"spec.transform: " + forbidden},
			wantText: []string{"may not use transforms.etl.mlkube.io md5 in namespace team-a", "mlkube-datapath-user"}},
		"get of the source": {edit: pipeline, held: without("get objects"),
			want:     []string{"spec.source.prefix: " + forbidden},
			wantText: []string{"may not get objects.etl.mlkube.io in namespace team-a", "ClusterRole mlkube-datapath-viewer", "built-in view, edit and admin"}},
		"list of a prefix source": {edit: pipeline, held: without("list objects"),
			want:     []string{"spec.source.prefix: " + forbidden},
			wantText: []string{"may not list objects.etl.mlkube.io in namespace team-a", "mlkube-datapath-viewer"}},
		"get of a list of objects": {edit: func(s *spec) { s.Source = v1alpha1.RunSource{Objects: []string{"a"}} }, held: []string{"use transforms md5", "create objects"},
			want: []string{"spec.source.objects: " + forbidden}, wantText: []string{"may not get objects"}},
		"get of a template": {edit: func(s *spec) { s.Source = v1alpha1.RunSource{Template: "s-{0..9}"} }, held: []string{"use transforms md5", "create objects"},
			want: []string{"spec.source.template: " + forbidden}, wantText: []string{"may not get objects"}},
		"create in the destination": {edit: pipeline, held: without("create objects"),
			want:     []string{"spec.destination.prefix: " + forbidden},
			wantText: []string{"may not create objects.etl.mlkube.io in namespace team-a", "mlkube-datapath-user", "ask an admin of namespace team-a to bind one of them to alice"}},
		"a dry run still needs create": {edit: func(s *spec) { s.DryRun = true }, held: []string{"use transforms md5", "get objects", "list objects"},
			want: []string{"spec.destination.prefix: " + forbidden}},
		"a store source needs its ObjectStore and its keys, no objects of the node tier": {
			edit: func(s *spec) { s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"} },
			held: []string{"use transforms md5", "get objectstores raw", "get secrets mlkube-object-stores", "create objects"}},
		"a store source without its keys": {
			edit: func(s *spec) { s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"} },
			held: []string{"use transforms md5", "get objectstores raw", "create objects", "get objects", "list objects"},
			want: []string{"spec.source.store: " + forbidden}, wantText: []string{"alice may not get secrets mlkube-object-stores in namespace team-a", "ClusterRole edit", "built-in admin"}},
		"a store source without its ObjectStore": {
			edit: func(s *spec) { s.Source = v1alpha1.RunSource{Store: "raw", Prefix: "images"} },
			held: []string{"use transforms md5", "get secrets mlkube-object-stores", "create objects"},
			want: []string{"spec.source.store: " + forbidden}, wantText: []string{"alice may not get objectstores.etl.mlkube.io raw in namespace team-a"}},
		"a store destination needs its ObjectStore and its keys, no objects of the node tier": {
			edit: func(s *spec) { s.Destination = v1alpha1.RunDestination{Store: "processed", Prefix: "out"} },
			held: []string{"use transforms md5", "get objects", "list objects", "get objectstores processed", "get secrets mlkube-object-stores"}},
		"a store destination without its ObjectStore": {
			edit: func(s *spec) { s.Destination = v1alpha1.RunDestination{Store: "processed", Prefix: "out"} },
			held: []string{"use transforms md5", "get objects", "list objects", "create objects", "get secrets mlkube-object-stores"},
			want: []string{"spec.destination.store: " + forbidden}, wantText: []string{"may not get objectstores.etl.mlkube.io processed"}},
		"a copy needs no Transform": {
			edit: func(s *spec) { s.Transform = "" },
			held: []string{"get objects", "list objects", "create objects"}},
		"only create transformruns": {edit: pipeline,
			want: []string{"spec.transform: " + forbidden, "spec.transform: " + forbidden, "spec.source.prefix: " + forbidden,
				"spec.source.prefix: " + forbidden, "spec.destination.prefix: " + forbidden}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := webhooktest.Reviewer(rights(tc.held...))
			errs, err := CreatorAccess(context.Background(), c, alice, run(tc.edit))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, webhooktest.Keys(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			msg := webhooktest.Messages(errs)
			for _, w := range tc.wantText {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal does not say %q:\n%s", w, msg)
				}
			}
		})
	}
}

// TestCreatorReviewsAskWhatTheAgentAsks: the reviews carry the admission request's user, UID,
// groups and extra, and the attributes the agent checks for a caller doing the same by hand
// (docs/datapath-rbac.md): use of each stage once, get and list of objects, create of objects, in
// the request's namespace.
func TestCreatorReviewsAskWhatTheAgentAsks(t *testing.T) {
	c, reviews := webhooktest.Reviewer(rights(allRights...))
	r := run(func(s *spec) { s.Transform = "upper>>md5>>upper" })
	r.Namespace = "" // the request's namespace is the API server's word
	if errs, err := CreatorAccess(context.Background(), c, alice, r); err != nil || len(errs) > 0 {
		t.Fatalf("a user holding every right: %v %v", errs, err)
	}
	attrs := func(verb, resource, name string) authzv1.SubjectAccessReviewSpec {
		return authzv1.SubjectAccessReviewSpec{
			User: "alice", UID: "u1", Groups: []string{"editors"}, Extra: map[string]authzv1.ExtraValue{"scope": {"x"}},
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: "team-a", Verb: verb, Group: "etl.mlkube.io", Resource: resource, Name: name},
		}
	}
	want := []authzv1.SubjectAccessReviewSpec{
		attrs("use", "transforms", "upper"), attrs("use", "transforms", "md5"),
		attrs("get", "objects", ""), attrs("list", "objects", ""), attrs("create", "objects", ""),
	}
	if diff := cmp.Diff(want, *reviews); diff != "" {
		t.Errorf("reviews (-want +got):\n%s", diff)
	}
}

// No answer is no admission: the webhook fails closed.
func TestCreatorReviewFailureIsAnError(t *testing.T) {
	c, _ := webhooktest.Reviewer(func(authzv1.SubjectAccessReviewSpec) (bool, error) { return true, errors.New("connection refused") })
	_, err := CreatorAccess(context.Background(), c, alice, run(nil))
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "alice may use transforms.etl.mlkube.io md5") {
		t.Fatalf("got %v; want the review's failure, naming the requester and the right", err)
	}
}

// The spec cannot change but for suspend, so an update asks nothing: suspending a run never
// depends on rights its creator may since have lost.
func TestUpdateAsksNothing(t *testing.T) {
	c, reviews := webhooktest.Reviewer(rights())
	old := run(nil)
	suspended := run(func(s *spec) { s.Suspend = true })
	if _, err := NewRules(c).ValidateUpdate(context.Background(), old, suspended); err != nil {
		t.Fatal(err)
	}
	if len(*reviews) > 0 {
		t.Errorf("an update sent %d reviews; want none", len(*reviews))
	}
}

// TestNamedRolesGrantWhatTheyAreNamedFor: the role a refusal tells the user to get grants the
// right refused, as the bundle ships it, and is aggregated into the built-in roles named.
func TestNamedRolesGrantWhatTheyAreNamedFor(t *testing.T) {
	roles, err := kubetest.ClusterRoles("../../manifests/agent/user_roles.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range needs("team-a", &run(func(s *spec) { s.Transform = "a>>b" }).Spec) {
		role, ok := roles[n.role]
		if !ok {
			t.Errorf("%s names the ClusterRole %s, which the bundle does not ship", n.path, n.role)
			continue
		}
		if !grants(role.Rules, n.q.Verb, n.q.Resource) {
			t.Errorf("ClusterRole %s does not grant %s, which a refusal on %s says it does", n.role, n.q, n.path)
		}
		for _, builtin := range strings.FieldsFunc(aggregatedInto[n.role], func(r rune) bool { return r == ',' || r == ' ' }) {
			if builtin != "and" && role.Labels["rbac.authorization.k8s.io/aggregate-to-"+builtin] != "true" {
				t.Errorf("ClusterRole %s is not aggregated into %s, as a refusal says", n.role, builtin)
			}
		}
	}
}

func grants(rules []rbacv1.PolicyRule, verb, resource string) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, "etl.mlkube.io") && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb) {
			return true
		}
	}
	return false
}
