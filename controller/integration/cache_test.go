package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/controller/manager"
)

// TestForgedPodCostsTheCacheLittle: a tenant's pod with the managed-by label, as big as the API
// server takes (annotations are capped at 256 KiB, the whole object at etcd's 1.5 MiB), costs the
// manager's cache a few KiB, and is kept without the labels a reconcile lists by.
func TestForgedPodCostsTheCacheLittle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cache.New(cfg, func() cache.Options {
		o := manager.CacheOptions(opts)
		o.Scheme = scheme.New()
		return o
	}())
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	// Informing on pods before the create, as the manager does.
	if _, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}

	env := make([]corev1.EnvVar, 100)
	for i := range env {
		env[i] = corev1.EnvVar{Name: "V", Value: strings.Repeat("v", 1<<10)}
	}
	forged := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "forged-fat", Namespace: "default",
			Labels:      map[string]string{labels.ManagedBy: labels.ManagedByValue, v1beta1.LabelJobName: "victim"},
			Annotations: map[string]string{"fat": strings.Repeat("a", 200<<10)},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "img", Env: env, Args: []string{strings.Repeat("x", 500<<10)}}}},
	}
	k8s.CreateTemporary(t, forged)

	var got corev1.Pod
	k8s.Eventually(t, "the forged pod in the cache", func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(forged), &got)
		return err == nil, client.IgnoreNotFound(err)
	})
	b, err := json.Marshal(&got)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 4<<10 {
		t.Errorf("the cache keeps %d bytes of a forged pod, want at most 4 KiB", len(b))
	}
	var listed corev1.PodList
	if err := c.List(ctx, &listed, client.InNamespace("default"), client.MatchingLabels{v1beta1.LabelJobName: "victim"}); err != nil {
		t.Fatal(err)
	}
	if len(listed.Items) != 0 {
		t.Errorf("a reconcile's list by job name finds the forged pod: %v", listed.Items[0].Name)
	}
}
