package restricted_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/internal/restricted"
	"github.com/mlkube/mlkube/internal/restricted/restrictedtest"
)

func TestPassesRestricted(t *testing.T) {
	spec := &corev1.PodSpec{
		SecurityContext: restricted.Pod(restricted.DefaultUser),
		Containers:      []corev1.Container{{Name: "c", Image: "i", SecurityContext: restricted.Container()}},
	}
	v, err := restrictedtest.Violations(spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(v) > 0 {
		t.Fatalf("restricted refuses the settings: %v", v)
	}
}

// The evaluator does refuse a container without them, so the test above can fail.
func TestBareContainerIsRefused(t *testing.T) {
	v, err := restrictedtest.Violations(&corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) < 3 {
		t.Fatalf("want runAsNonRoot, allowPrivilegeEscalation, capabilities and seccomp refused, got %v", v)
	}
}
