package podsecurity

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/pod-security-admission/policy"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/internal/restricted"
)

// An upgrade of k8s.io/pod-security-admission that adds a check shows up here: give the new ID
// its field and hint in attributions.
func TestEveryUpstreamCheckHasItsField(t *testing.T) {
	for _, c := range policy.DefaultChecks() {
		if _, ok := attributions[c.ID]; !ok {
			t.Errorf("policy.DefaultChecks() has %s, which attributions lacks", c.ID)
		}
	}
}

func passing() *corev1.PodSpec {
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}
	restricted.Default(spec)
	return spec
}

// A check the table does not know is still refused, at the container it fails in: the verdict
// never depends on the table.
func TestUnknownCheckIsStillRefused(t *testing.T) {
	saved := attributions["privileged"]
	delete(attributions, "privileged")
	defer func() { attributions["privileged"] = saved }()
	spec := passing()
	spec.Containers[0].SecurityContext.Privileged = ptr.To(true)
	errs := Restricted(field.NewPath("spec"), nil, spec)
	if len(errs) != 1 || errs[0].Field != "spec.containers[0]" || errs[0].Type != field.ErrorTypeForbidden {
		t.Fatalf("got %v; want one Forbidden at spec.containers[0]", errs)
	}
}

// A failure of the pod-level fields is the pod's; a container that adds to it is named too, and a
// container that only inherits it is not.
func TestPodLevelAndContainerFailuresApart(t *testing.T) {
	spec := passing()
	spec.Containers = append(spec.Containers, *spec.Containers[0].DeepCopy())
	spec.Containers[1].Name = "d"
	spec.SecurityContext.SeccompProfile.Type = corev1.SeccompProfileTypeUnconfined
	spec.Containers[1].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	var got []string
	for _, e := range Restricted(field.NewPath("s"), nil, spec) {
		got = append(got, e.Field)
	}
	if strings.Join(got, " ") != "s.securityContext.seccompProfile s.containers[1].securityContext.seccompProfile" {
		t.Fatalf("fields %v; want the pod's and container d's seccomp profiles", got)
	}
}

func TestPassingSpecHasNoErrors(t *testing.T) {
	if errs := Restricted(field.NewPath("s"), nil, passing()); len(errs) > 0 {
		t.Fatalf("a defaulted pod: %v", errs)
	}
	if errs := Restricted(field.NewPath("s"), nil, &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}); len(errs) == 0 {
		t.Fatal("a bare pod passes; the evaluator is not running")
	}
}

func TestMessageSaysWhyAndWhatToDo(t *testing.T) {
	spec := passing()
	spec.HostNetwork = true
	errs := Restricted(field.NewPath("s"), nil, spec)
	want := "s.hostNetwork: Forbidden: the restricted Pod Security Standard forbids host namespaces (hostNetwork=true); transformers reach the node agent on the pod network; remove it"
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("got %v; want %s", errs, want)
	}
}
