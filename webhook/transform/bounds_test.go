package transform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// TestValidateCreateRefusesOverBounds: every string and list a user sets is refused one past its
// bound, with a message naming the field and the bound, and taken at the bound.
func TestValidateCreateRefusesOverBounds(t *testing.T) {
	code := func(f func(*v1alpha1.CodeSpec)) *v1alpha1.Transform {
		tr := builders.Transform("md5").Code("python3.11", "def transform(b):\n    return b\n").Obj()
		f(tr.Spec.Code)
		return tr
	}
	runtime := func(f func(*v1alpha1.RuntimeSpec)) *v1alpha1.Transform {
		tr := builders.Transform("md5").Runtime(echoImage).Obj()
		f(tr.Spec.Runtime)
		return tr
	}
	spec := func(f func(*v1alpha1.TransformSpec)) *v1alpha1.Transform {
		return builders.Transform("md5").Runtime(echoImage).Spec(f).Obj()
	}
	pad := func(prefix string, n int) string { return prefix + strings.Repeat("#", n-len(prefix)) }
	words := func(n int) []string { return make([]string, n) }
	env := func(n int) []corev1.EnvVar {
		e := make([]corev1.EnvVar, n)
		for i := range e {
			e[i].Name = "V"
		}
		return e
	}
	tolerations := func(n int) []corev1.Toleration {
		ts := make([]corev1.Toleration, n)
		for i := range ts {
			ts[i].Operator = corev1.TolerationOpExists
		}
		return ts
	}
	selector := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	for name, tc := range map[string]struct {
		at, over *v1alpha1.Transform
		want     string
	}{
		"code.source": {
			at:   code(func(c *v1alpha1.CodeSpec) { c.Source = pad("def transform(b): return b\n", v1alpha1.MaxCodeSource) }),
			over: code(func(c *v1alpha1.CodeSpec) { c.Source = pad("def transform(b): return b\n", v1alpha1.MaxCodeSource+1) }),
			want: "spec.code.source: Too long: may not be more than 102400 bytes",
		},
		"code.dependencies": {
			at:   code(func(c *v1alpha1.CodeSpec) { c.Dependencies = pad("", v1alpha1.MaxCodeDependencies) }),
			over: code(func(c *v1alpha1.CodeSpec) { c.Dependencies = pad("", v1alpha1.MaxCodeDependencies+1) }),
			want: "spec.code.dependencies: Too long: may not be more than 16384 bytes",
		},
		"code.function": {
			at:   code(func(c *v1alpha1.CodeSpec) { c.Function = strings.Repeat("f", v1alpha1.MaxCodeFunction) }),
			over: code(func(c *v1alpha1.CodeSpec) { c.Function = strings.Repeat("f", v1alpha1.MaxCodeFunction+1) }),
			want: "spec.code.function: Too long: may not be more than 128 bytes",
		},
		"code.runtime": {
			over: code(func(c *v1alpha1.CodeSpec) { c.Runtime = strings.Repeat("p", v1alpha1.MaxCodeRuntime+1) }),
			want: "spec.code.runtime: Too long: may not be more than 64 bytes",
		},
		"runtime.image": {
			at:   runtime(func(r *v1alpha1.RuntimeSpec) { r.Image = pad("img", v1alpha1.MaxImage) }),
			over: runtime(func(r *v1alpha1.RuntimeSpec) { r.Image = pad("img", v1alpha1.MaxImage+1) }),
			want: "spec.runtime.image: Too long: may not be more than 1024 bytes",
		},
		"runtime.command items": {
			at:   runtime(func(r *v1alpha1.RuntimeSpec) { r.Command = words(v1alpha1.MaxCommandItems) }),
			over: runtime(func(r *v1alpha1.RuntimeSpec) { r.Command = words(v1alpha1.MaxCommandItems + 1) }),
			want: "spec.runtime.command: Too many: 257: must have at most 256 items",
		},
		"runtime.args word": {
			at:   runtime(func(r *v1alpha1.RuntimeSpec) { r.Args = []string{pad("", v1alpha1.MaxCommandItem)} }),
			over: runtime(func(r *v1alpha1.RuntimeSpec) { r.Args = []string{"", pad("", v1alpha1.MaxCommandItem+1)} }),
			want: "spec.runtime.args[1]: Too long: may not be more than 32768 bytes",
		},
		"runtime.env": {
			at:   runtime(func(r *v1alpha1.RuntimeSpec) { r.Env = env(v1alpha1.MaxEnv) }),
			over: runtime(func(r *v1alpha1.RuntimeSpec) { r.Env = env(v1alpha1.MaxEnv + 1) }),
			want: "spec.runtime.env: Too many: 257: must have at most 256 items",
		},
		"env": {
			at:   spec(func(s *v1alpha1.TransformSpec) { s.Env = env(v1alpha1.MaxEnv) }),
			over: spec(func(s *v1alpha1.TransformSpec) { s.Env = env(v1alpha1.MaxEnv + 1) }),
			want: "spec.env: Too many: 257: must have at most 256 items",
		},
		"nodeSelector": {
			at:   spec(func(s *v1alpha1.TransformSpec) { s.NodeSelector = selector(v1alpha1.MaxNodeSelector) }),
			over: spec(func(s *v1alpha1.TransformSpec) { s.NodeSelector = selector(v1alpha1.MaxNodeSelector + 1) }),
			want: "spec.nodeSelector: Too many: 65: must have at most 64 items",
		},
		"tolerations": {
			at:   spec(func(s *v1alpha1.TransformSpec) { s.Tolerations = tolerations(v1alpha1.MaxTolerations) }),
			over: spec(func(s *v1alpha1.TransformSpec) { s.Tolerations = tolerations(v1alpha1.MaxTolerations + 1) }),
			want: "spec.tolerations: Too many: 65: must have at most 64 items",
		},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.at != nil {
				if errs := ValidateCreate(tc.at); len(errs) != 0 {
					t.Errorf("at the bound: %s", webhooktest.Messages(errs))
				}
			}
			if diff := cmp.Diff(tc.want+"\n", webhooktest.Messages(ValidateCreate(tc.over))); diff != "" {
				t.Errorf("one past the bound (-want +got):\n%s", diff)
			}
		})
	}
}
