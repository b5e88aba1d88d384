// Package manifests_test checks the RBAC roles the bundle (install.yaml) ships for mlkube's users:
// which built-in roles they are aggregated into, and, on a real kube-apiserver, what they allow.
// make chart-check proves the chart renders the same objects.
package manifests_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// bundleRBAC is the RBAC of manifests/install.yaml, by name (namespaced ones by namespace/name).
type bundleRBAC struct {
	clusterRoles map[string]rbacv1.ClusterRole
	roles        map[string]rbacv1.Role
	roleBindings map[string]rbacv1.RoleBinding
}

func readBundleRBAC(t *testing.T) bundleRBAC {
	t.Helper()
	f, err := os.Open("install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := bundleRBAC{map[string]rbacv1.ClusterRole{}, map[string]rbacv1.Role{}, map[string]rbacv1.RoleBinding{}}
	docs := yaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return b
		}
		if err != nil {
			t.Fatal(err)
		}
		var kind struct{ Kind string }
		if err := sigsyaml.Unmarshal(doc, &kind); err != nil {
			t.Fatal(err)
		}
		switch kind.Kind {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			decode(t, doc, &r)
			b.clusterRoles[r.Name] = r
		case "Role":
			var r rbacv1.Role
			decode(t, doc, &r)
			b.roles[r.Namespace+"/"+r.Name] = r
		case "RoleBinding":
			var r rbacv1.RoleBinding
			decode(t, doc, &r)
			b.roleBindings[r.Namespace+"/"+r.Name] = r
		}
	}
}

func decode(t *testing.T, doc []byte, into any) {
	t.Helper()
	if err := sigsyaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatal(err)
	}
}

// builtinChain is how Kubernetes' own roles aggregate into each other: view carries the label
// aggregate-to-edit and edit aggregate-to-admin, so what reaches view reaches edit and admin.
var builtinChain = map[string]string{"edit": "view", "admin": "edit"}

// aggregatedInto names the ClusterRoles whose rules the built-in ClusterRole builtin (view, edit or
// admin) gathers in a real cluster, as the clusterrole-aggregation controller does; envtest runs
// no controller-manager, so the API server tests bind these roles one by one instead.
func aggregatedInto(roles map[string]rbacv1.ClusterRole, builtin string) []string {
	set := map[string]bool{}
	for b := builtin; b != ""; b = builtinChain[b] {
		for name, r := range roles {
			if r.Labels["rbac.authorization.k8s.io/aggregate-to-"+b] == "true" {
				set[name] = true
			}
		}
	}
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TestAggregationLabels: binding the built-in view, edit or admin in a namespace gives mlkube's
// rights there, and nothing else of the bundle is aggregated.
func TestAggregationLabels(t *testing.T) {
	roles := readBundleRBAC(t).clusterRoles
	editor := []string{"mlkube-datapath-user", "mlkube-datapath-viewer", "mlkube-edit", "mlkube-view"}
	for builtin, want := range map[string][]string{
		"view":  {"mlkube-datapath-viewer", "mlkube-view"},
		"edit":  editor,
		"admin": editor,
	} {
		if diff := cmp.Diff(want, aggregatedInto(roles, builtin)); diff != "" {
			t.Errorf("ClusterRoles aggregated into %s (-want +got):\n%s", builtin, diff)
		}
	}
}
