package kubetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// ClusterRoles reads the ClusterRoles of a multi-document YAML file (the bundle, or one of its
// sources) by name, skipping every other kind: tests check what the roles mlkube ships allow,
// not copies of them.
func ClusterRoles(path string) (map[string]rbacv1.ClusterRole, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]rbacv1.ClusterRole{}
	docs := yaml.NewYAMLReader(bufio.NewReader(f))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		var kind struct{ Kind string }
		if err := sigsyaml.Unmarshal(doc, &kind); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		if kind.Kind != "ClusterRole" {
			continue
		}
		var r rbacv1.ClusterRole
		if err := sigsyaml.UnmarshalStrict(doc, &r); err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		out[r.Name] = r
	}
}
