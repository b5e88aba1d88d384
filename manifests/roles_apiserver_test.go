package manifests_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mlkube/mlkube/internal/kubetest"
)

const agentNamespace = "mlkube-datapath"

// subject is who a SubjectAccessReview asks about.
type subject struct {
	user   string
	groups []string
}

var authenticated = []string{"system:authenticated"}

// access parses "NS: VERB RESOURCE[.GROUP][/SUBRESOURCE]", e.g. "team-a: update
// mxjobs.mxnet.mlkube.io/status" or "mlkube-datapath: create pods/portforward".
func access(t *testing.T, s string) authzv1.ResourceAttributes {
	t.Helper()
	ns, rest, ok := strings.Cut(s, ": ")
	verb, res, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 {
		t.Fatalf("bad access %q", s)
	}
	res, sub, _ := strings.Cut(res, "/")
	res, group, _ := strings.Cut(res, ".")
	return authzv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: res, Subresource: sub}
}

// each is every access of verbs on resources in ns, in access's form.
func each(ns string, verbs []string, resources ...string) []string {
	var out []string
	for _, r := range resources {
		for _, v := range verbs {
			out = append(out, ns+": "+v+" "+r)
		}
	}
	return out
}

var (
	kinds      = []string{"mxjobs.mxnet.mlkube.io", "transforms.etl.mlkube.io", "transformruns.etl.mlkube.io"}
	statuses   = []string{"mxjobs.mxnet.mlkube.io/status", "transforms.etl.mlkube.io/status", "transformruns.etl.mlkube.io/status"}
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}
)

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// TestRolesOnTheAPIServer binds the bundle's roles as a cluster admin would (the built-in view and
// edit in team-a, mlkube-datapath-user to team-a's mlkube-cli ServiceAccount) and asks the API
// server's RBAC what each subject may do. Aggregation is simulated by binding each ClusterRole
// that aggregatedInto names.
func TestRolesOnTheAPIServer(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(kubetest.StartAPIServer(t))
	ctx := context.Background()
	b := readBundleRBAC(t)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"team-a", "team-b", agentNamespace} {
		must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	}
	for _, name := range aggregatedInto(b.clusterRoles, "admin") {
		r := b.clusterRoles[name]
		must(cs.RbacV1().ClusterRoles().Create(ctx, &r, metav1.CreateOptions{}))
	}
	pf, ok := b.roles[agentNamespace+"/mlkube-datapath-portforward"]
	pfb, ok2 := b.roleBindings[agentNamespace+"/mlkube-datapath-portforward"]
	if !ok || !ok2 {
		t.Fatal("install.yaml has no Role and RoleBinding mlkube-datapath-portforward in mlkube-datapath")
	}
	must(cs.RbacV1().Roles(agentNamespace).Create(ctx, &pf, metav1.CreateOptions{}))
	must(cs.RbacV1().RoleBindings(agentNamespace).Create(ctx, &pfb, metav1.CreateOptions{}))

	bind := func(role string, s rbacv1.Subject) {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{s}}
		must(cs.RbacV1().RoleBindings("team-a").Create(ctx, rb, metav1.CreateOptions{}))
	}
	for _, role := range aggregatedInto(b.clusterRoles, "view") {
		bind(role, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "vera"})
	}
	for _, role := range aggregatedInto(b.clusterRoles, "edit") {
		bind(role, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: "User", Name: "ed"})
	}
	// docs/install.md#onboarding-a-namespace: kubectl etl's data path identity.
	bind("mlkube-datapath-user", rbacv1.Subject{Kind: "ServiceAccount", Name: "mlkube-cli", Namespace: "team-a"})
	sa := subject{"system:serviceaccount:team-a:mlkube-cli", []string{"system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated"}}

	objects := "objects.etl.mlkube.io"
	use := "team-a: use transforms.etl.mlkube.io"
	// The API server's RBAC authorizer reads bindings through its own watch, a little behind their
	// creation: wait until each subject's binding is in force, by asking for what it grants (and
	// the port-forward Role's, for everyone), before any answer is taken as the roles' own.
	for _, s := range []subject{{"vera", authenticated}, {"ed", authenticated}, sa} {
		for _, a := range []string{"team-a: get " + objects, "mlkube-datapath: create pods/portforward"} {
			for deadline := time.Now().Add(time.Minute); !allowed(t, cs, s, access(t, a)); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%s was not granted %q a minute after the bindings were made", s.user, a)
				}
			}
		}
	}
	// Reading an ObjectStore lets a caller list its objects through an agent (kubectl etl ls s3://).
	getStore := "team-a: get objectstores.etl.mlkube.io"
	// Every authenticated user may find and reach the agents, and do nothing else there.
	agents := []string{"mlkube-datapath: get pods", "mlkube-datapath: list pods",
		"mlkube-datapath: create pods/portforward", "mlkube-datapath: get pods/portforward"}
	notAgents := concat(each(agentNamespace, []string{"create", "update", "delete", "watch"}, "pods"),
		[]string{"mlkube-datapath: create pods/exec", "mlkube-datapath: get pods/log", "mlkube-datapath: get secrets",
			"mlkube-datapath: create pods/attach", "mlkube-datapath: list daemonsets.apps", "mlkube-datapath: use transforms.etl.mlkube.io"},
		each("team-a", []string{"list", "get"}, "pods"), each("team-a", []string{"create"}, "pods/portforward"),
		each("kube-system", []string{"list"}, "pods"), each("kube-system", []string{"create"}, "pods/portforward"))
	// Nothing of team-a in team-b.
	otherNamespace := concat(each("team-b", concat(readVerbs, writeVerbs), kinds...),
		each("team-b", readVerbs, statuses...),
		each("team-b", []string{"get", "list", "create", "delete"}, objects),
		[]string{"team-b: use transforms.etl.mlkube.io"})

	for name, tc := range map[string]struct {
		subject         subject
		allowed, denied []string
	}{
		"a namespace viewer reads mlkube's kinds and the namespace's data": {
			subject: subject{"vera", authenticated},
			allowed: concat(each("team-a", readVerbs, kinds...), each("team-a", readVerbs, statuses...),
				each("team-a", []string{"get", "list"}, objects), []string{getStore}, agents),
			denied: concat(each("team-a", writeVerbs, kinds...), each("team-a", []string{"update", "patch"}, statuses...),
				each("team-a", []string{"create", "delete"}, objects), []string{use}, otherNamespace, notAgents),
		},
		"a namespace editor writes mlkube's kinds and data and runs Transforms, but no status": {
			subject: subject{"ed", authenticated},
			allowed: concat(each("team-a", concat(readVerbs, writeVerbs), kinds...), each("team-a", readVerbs, statuses...),
				each("team-a", []string{"get", "list", "create", "delete"}, objects), []string{use}, agents),
			denied: concat(each("team-a", []string{"create", "update", "patch", "delete"}, statuses...),
				otherNamespace, notAgents),
		},
		"the namespace's data path ServiceAccount uses the data path and nothing of the API": {
			subject: sa,
			allowed: concat(each("team-a", []string{"get", "list", "create", "delete"}, objects), []string{use, getStore}, agents),
			denied: concat(each("team-a", concat(readVerbs, writeVerbs), kinds...), otherNamespace, notAgents,
				each("team-a", []string{"list", "watch", "create", "update", "delete"}, "objectstores.etl.mlkube.io"),
				[]string{"team-a: get secrets", "team-b: get objectstores.etl.mlkube.io"}),
		},
		"an authenticated user with no binding only reaches the agents": {
			subject: subject{"nobody", authenticated},
			allowed: agents,
			denied: concat(each("team-a", readVerbs, kinds...), each("team-a", []string{"get"}, objects),
				[]string{use, getStore}, notAgents),
		},
		"an unauthenticated caller cannot reach the agents": {
			subject: subject{"system:anonymous", []string{"system:unauthenticated"}},
			denied:  agents,
		},
	} {
		t.Run(name, func(t *testing.T) {
			for _, want := range []struct {
				allowed bool
				list    []string
			}{{true, tc.allowed}, {false, tc.denied}} {
				for _, a := range want.list {
					if got := allowed(t, cs, tc.subject, access(t, a)); got != want.allowed {
						t.Errorf("%s may %q: %v, want %v", tc.subject.user, a, got, want.allowed)
					}
				}
			}
		})
	}
}

func allowed(t *testing.T, cs kubernetes.Interface, s subject, a authzv1.ResourceAttributes) bool {
	t.Helper()
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{User: s.user, Groups: s.groups, ResourceAttributes: &a}}
	res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Status.Allowed
}
