package transform

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/builders"
)

func TestMountTokenGivesTheContainerItsCredential(t *testing.T) {
	for name, tr := range map[string]*v1alpha1.Transform{
		"runtime":     defaulted(builders.Transform("rt").Runtime("img")),
		"io":          defaulted(builders.Transform("io").Runtime("img", "cat").Comm(v1alpha1.CommIO)),
		"podTemplate": defaulted(builders.Transform("tpl").PodTemplate("img")),
	} {
		t.Run(name, func(t *testing.T) {
			pod := podspec.Build(tr, "node-1", devImages)
			mountToken(pod, tr, "k3")
			var vol *corev1.Volume
			for i := range pod.Spec.Volumes {
				if pod.Spec.Volumes[i].Name == tokenVolumeName {
					vol = &pod.Spec.Volumes[i]
				}
			}
			if vol == nil || vol.Secret == nil || vol.Secret.SecretName != tr.Name+"-mlkube-token-k3" || *vol.Secret.DefaultMode != 0o444 {
				t.Fatalf("token volume %+v", vol)
			}
			c := pod.Spec.Containers[0]
			mounted := false
			for _, m := range c.VolumeMounts {
				mounted = mounted || (m.Name == tokenVolumeName && m.MountPath == wire.TransformerTokenDir && m.ReadOnly)
			}
			if !mounted {
				t.Errorf("token volume not mounted read-only at %s: %+v", wire.TransformerTokenDir, c.VolumeMounts)
			}
			if got := envValue(c, wire.EnvTokenFile); got != "/var/run/secrets/mlkube.io/transformer/token" {
				t.Errorf("%s = %q", wire.EnvTokenFile, got)
			}
			if got := pod.Annotations[v1alpha1.AnnotationTokenKey]; got != "k3" {
				t.Errorf("token key annotation %q, want k3", got)
			}
		})
	}
}

func TestNodeStatusRecordsTheTokenKey(t *testing.T) {
	tr := defaulted(builders.Transform("echo").Runtime("img"))
	pod := tpod(tr, "node-1", time.Minute, true)
	mountToken(&pod, tr, "k2")
	p := computePlan(tr, []corev1.Node{node("node-1")}, []corev1.Pod{pod}, nil, now)
	want := []v1alpha1.NodeStatus{{Node: "node-1", Pod: "echo-" + v1alpha1.NodeHash("node-1"), IP: "10.0.0.1", Port: 8000, Ready: true, TokenKey: "k2"}}
	if diff := cmp.Diff(want, p.status.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
}

// envValue is the value of the container's variable name, or "".
func envValue(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
