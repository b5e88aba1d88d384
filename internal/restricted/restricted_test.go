package restricted_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

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

func TestDefaultMakesABarePodPass(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Image: "i"}},
		Containers:     []corev1.Container{{Name: "c", Image: "i"}},
	}
	restricted.Default(spec)
	if v, err := restrictedtest.Violations(spec); err != nil || len(v) > 0 {
		t.Fatalf("a defaulted bare pod: %v %v", v, err)
	}
	psc := spec.SecurityContext
	if *psc.RunAsUser != restricted.DefaultUser || *psc.RunAsGroup != restricted.DefaultUser {
		t.Errorf("user %v group %v; want %d for both", *psc.RunAsUser, *psc.RunAsGroup, restricted.DefaultUser)
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the ServiceAccount token is mounted by default")
	}
}

// What the user wrote stays, right or wrong: a wrong value is refused where it was written.
func TestDefaultKeepsWhatIsSet(t *testing.T) {
	spec := &corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(true),
		SecurityContext:              &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(false), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}},
		Containers: []corev1.Container{{Name: "c", Image: "i", SecurityContext: &corev1.SecurityContext{
			RunAsUser: ptr.To[int64](1000), AllowPrivilegeEscalation: ptr.To(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}},
		}}},
	}
	want := spec.DeepCopy()
	restricted.Default(spec)
	if diff := cmp.Diff(want, spec); diff != "" {
		t.Errorf("Default changed what was set (-want +got):\n%s", diff)
	}
}

// A user named by one container is the template's choice: no pod-level user or group is added.
func TestDefaultAddsNoUserBesideAContainers(t *testing.T) {
	spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To[int64](1000)}}}}
	restricted.Default(spec)
	if spec.SecurityContext.RunAsUser != nil || spec.SecurityContext.RunAsGroup != nil {
		t.Errorf("pod-level user %v group %v; want none", spec.SecurityContext.RunAsUser, spec.SecurityContext.RunAsGroup)
	}
	if v, err := restrictedtest.Violations(spec); err != nil || len(v) > 0 {
		t.Fatalf("a container's own non-root user: %v %v", v, err)
	}
}
