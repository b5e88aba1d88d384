package transform

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/restricted/restrictedtest"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// generateTransform makes a fuzzed Transform: a valid one of each form with up to three fields
// refilled at random.
func generateTransform(data []byte) *v1alpha1.Transform {
	bases := []func() *v1alpha1.Transform{
		func() *v1alpha1.Transform { return builders.Transform("rt").Runtime("img", "cmd").Obj() },
		func() *v1alpha1.Transform {
			tr := builders.Transform("pt").PodTemplate("img").Obj()
			tr.Spec.PodTemplate.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "default", ContainerPort: 8000}}
			return tr
		},
		func() *v1alpha1.Transform {
			return builders.Transform("code").Code("python3.11", "def transform(b): return b").Obj()
		},
	}
	fields := func(tr *v1alpha1.Transform) []any {
		s := &tr.Spec
		ptrs := []any{&tr.ObjectMeta, &s.Communication, &s.Argument, &s.InitTimeout, &s.ObjectTimeout, &s.Env,
			&s.NodeSelector, &s.Tolerations, &s.FailurePolicy, &s.Runtime, &s.PodTemplate, &s.Code}
		if s.PodTemplate != nil {
			ps := &s.PodTemplate.Spec
			ptrs = append(ptrs, &ps.Containers[0].Ports, &ps.Containers[0].Command,
				&ps.SecurityContext, &ps.Containers[0].SecurityContext, &ps.HostNetwork, &ps.Volumes, &ps.InitContainers)
		}
		return ptrs
	}
	return webhooktest.Generate(data, bases, fields,
		webhooktest.Pick[v1alpha1.Communication]("", v1alpha1.CommHPush, v1alpha1.CommHPull, v1alpha1.CommIO, v1alpha1.CommWS, "ws://", "grpc"),
		webhooktest.Pick[v1alpha1.Argument]("", v1alpha1.ArgFQN, v1alpha1.ArgURL, "path"),
		webhooktest.Pick[v1alpha1.FailurePolicy]("", v1alpha1.FailureAbort, v1alpha1.FailureRestart, "Ignore"),
	)
}

// TestGeneratedTransformsMixValidAndInvalid guards the fuzz target against going vacuous.
func TestGeneratedTransformsMixValidAndInvalid(t *testing.T) {
	share := webhooktest.ValidShare(2000, generateTransform, func(tr *v1alpha1.Transform) bool { return len(ValidateCreate(tr)) == 0 })
	t.Logf("valid share %.2f", share)
	if share < 0.2 || share > 0.8 {
		t.Fatalf("%.0f%% of generated Transforms are valid; want between 20%% and 80%%", share*100)
	}
}

// FuzzTransformAdmission checks, on random Transforms, that the rules never panic, that
// defaulting is idempotent and survives the API server's JSON round trip, that a valid Transform
// stays valid once defaulted, and that what defaulting adds never counts as an immutable change.
func FuzzTransformAdmission(f *testing.F) {
	for _, seed := range []string{"", "runtime", "podTemplate", "code", "a longer seed for other shapes"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := generateTransform(data)
		webhooktest.CheckProperties(t, tr, webhooktest.Rules[*v1alpha1.Transform]{
			New:      func() *v1alpha1.Transform { return &v1alpha1.Transform{} },
			DeepCopy: func(o *v1alpha1.Transform) *v1alpha1.Transform { return o.DeepCopy() },
			Default:  Default, Create: ValidateCreate, Update: ValidateUpdate,
			Spec:      func(o *v1alpha1.Transform) any { return o.Spec },
			Immutable: func(old, obj *v1alpha1.Transform) field.ErrorList { return validateImmutable(&old.Spec, &obj.Spec) },
		})
		checkPodSecurityVerdict(t, tr)
	})
}

// checkPodSecurityVerdict: the webhook refuses a Transform for Pod Security if and only if the
// pod the controller builds from it fails restricted in the part its author answers for, by the
// evaluator restrictedtest runs on its own; and never blames mlkube's additions. It ties the
// attribution to upstream's verdict.
func checkPodSecurityVerdict(t *testing.T, tr *v1alpha1.Transform) {
	t.Helper()
	if len(validateForm(&tr.Spec)) > 0 {
		return // no pod to build
	}
	refused := false
	for _, e := range ValidateCreate(tr) {
		if e.Type == field.ErrorTypeInternal {
			t.Fatalf("mlkube's own part of the pod is refused: %v", e)
		}
		if e.Type == field.ErrorTypeForbidden && strings.HasPrefix(e.Detail, "the restricted Pod Security Standard forbids") {
			refused = true
		}
	}
	d := tr.DeepCopy()
	Default(d)
	pod := podspec.Build(d, "node", wire.DefaultPodImages())
	v, err := restrictedtest.Violations(&pod.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if refused != (len(v) > 0) {
		t.Fatalf("the webhook refuses for Pod Security: %v; the built pod's violations: %v\ntemplate: %+v", refused, v, tr.Spec.PodTemplate)
	}
}

// The generator reaches both sides of the Pod Security verdict, so the property above is not
// vacuous.
func TestGeneratedTransformsMixPodSecurity(t *testing.T) {
	refused, judged := 0, 0
	for i := range 2000 {
		tr := generateTransform([]byte(fmt.Sprintf("seed %d", i)))
		if len(validateForm(&tr.Spec)) > 0 {
			continue
		}
		judged++
		for _, e := range validatePodSecurity(&tr.Spec) {
			if e.Type == field.ErrorTypeForbidden {
				refused++
				break
			}
		}
	}
	t.Logf("%d of %d judged Transforms refused for Pod Security", refused, judged)
	if refused == 0 || refused == judged {
		t.Fatalf("%d of %d judged Transforms refused for Pod Security; want some of each", refused, judged)
	}
}
