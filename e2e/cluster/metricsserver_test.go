package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/internal/images"
)

// TestMetricsServerManifest: metrics-server.yaml holds what metrics.k8s.io needs, runs the image
// e2e/images builds, reaches the test clusters' kubelets, and meets the restricted Pod Security
// Standard.
func TestMetricsServerManifest(t *testing.T) {
	objs, err := metricsServerObjects()
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var deploy appsv1.Deployment
	for _, u := range objs {
		kinds = append(kinds, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
		if u.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &deploy, true); err != nil {
				t.Fatalf("Deployment: %v", err)
			}
		}
	}
	wantKinds := []string{
		"ServiceAccount kube-system/metrics-server",
		"ClusterRole /system:aggregated-metrics-reader",
		"ClusterRole /system:metrics-server",
		"ClusterRoleBinding /system:metrics-server",
		"RoleBinding kube-system/metrics-server-auth-reader",
		"ClusterRoleBinding /metrics-server:system:auth-delegator",
		"Service kube-system/metrics-server",
		"Deployment kube-system/metrics-server",
		"APIService /v1beta1.metrics.k8s.io",
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}

	pod := deploy.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers: %d, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	gotContainer := struct {
		Image  string
		Pull   corev1.PullPolicy
		Args   []string
		Volume corev1.VolumeSource
	}{c.Image, c.ImagePullPolicy, c.Args, pod.Volumes[0].VolumeSource}
	wantContainer := gotContainer
	wantContainer.Image, wantContainer.Pull = images.MetricsServer.Ref, corev1.PullIfNotPresent
	wantContainer.Args = []string{"--cert-dir=/tmp", "--secure-port=10250", "--kubelet-insecure-tls",
		"--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port", "--metric-resolution=15s"}
	wantContainer.Volume = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if diff := cmp.Diff(wantContainer, gotContainer); diff != "" {
		t.Errorf("container (-want +got):\n%s", diff)
	}

	// The restricted profile: non-root, RuntimeDefault seccomp, no privilege escalation, every
	// capability dropped, no host namespaces, only ephemeral volumes.
	wantPod := &corev1.PodSecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65534), RunAsGroup: ptr.To[int64](65534),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if diff := cmp.Diff(wantPod, pod.SecurityContext); diff != "" {
		t.Errorf("pod securityContext (-want +got):\n%s", diff)
	}
	wantSC := &corev1.SecurityContext{
		ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
	if diff := cmp.Diff(wantSC, c.SecurityContext); diff != "" {
		t.Errorf("container securityContext (-want +got):\n%s", diff)
	}
	if pod.HostNetwork || pod.HostPID || pod.HostIPC {
		t.Error("pod uses a host namespace")
	}
}

func TestNodesWithoutMetrics(t *testing.T) {
	node := func(name string) corev1.Node { return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}} }
	sample := func(name string) metricsv1beta1.NodeMetrics {
		return metricsv1beta1.NodeMetrics{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	nodes := []corev1.Node{node("mlkube-node-2"), node("mlkube-node-1")}
	for name, tc := range map[string]struct {
		metrics []metricsv1beta1.NodeMetrics
		want    []string
	}{
		"none yet":           {nil, []string{"mlkube-node-1", "mlkube-node-2"}},
		"one scraped":        {[]metricsv1beta1.NodeMetrics{sample("mlkube-node-2")}, []string{"mlkube-node-1"}},
		"every node":         {[]metricsv1beta1.NodeMetrics{sample("mlkube-node-1"), sample("mlkube-node-2")}, nil},
		"a node now removed": {[]metricsv1beta1.NodeMetrics{sample("gone"), sample("mlkube-node-1")}, []string{"mlkube-node-2"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, nodesWithoutMetrics(nodes, tc.metrics)); diff != "" {
				t.Errorf("nodesWithoutMetrics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPollUntil(t *testing.T) {
	notYet := errors.New("no metrics yet for node(s) [mlkube-node-2]")
	t.Run("answers after a few calls", func(t *testing.T) {
		calls := 0
		err := pollUntil(context.Background(), time.Minute, time.Millisecond, func(context.Context) error {
			if calls++; calls < 3 {
				return notYet
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Errorf("pollUntil = %v after %d calls, want nil after 3", err, calls)
		}
	})
	t.Run("deadline: the last answer, not the deadline's error", func(t *testing.T) {
		err := pollUntil(context.Background(), 50*time.Millisecond, time.Millisecond, func(ctx context.Context) error {
			select {
			case <-ctx.Done(): // a call the deadline cuts short
				return ctx.Err()
			case <-time.After(5 * time.Millisecond):
				return notYet
			}
		})
		if !errors.Is(err, notYet) {
			t.Errorf("pollUntil = %v, want %v", err, notYet)
		}
	})
	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		err := pollUntil(ctx, time.Minute, time.Millisecond, func(context.Context) error { cancel(); return notYet })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("pollUntil = %v, want context.Canceled", err)
		}
	})
}
