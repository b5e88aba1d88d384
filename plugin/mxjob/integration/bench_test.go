package integration

import (
	"context"
	"fmt"
	"testing"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// BenchmarkList compares `kubectl mxjob list` (a new root command, ConfigFlags, a warm discovery
// cache, the table printed) with a bare client-go list of the same jobs, in a namespace of 0 and
// of 1000 MxJobs. Run with: make envtest-bench or
// KUBEBUILDER_ASSETS=$(hack/build/envtest-assets.sh) go test ./plugin/mxjob/integration -run - -bench List
func BenchmarkList(b *testing.B) {
	dyn := dynamic.NewForConfigOrDie(server.Config)
	gvr := v1beta1.GroupVersion.WithResource("mxjobs")
	for _, n := range []int{0, 1000} {
		ns := fmt.Sprintf("bench-%d", n)
		createJobs(b, ns, n)
		cache := b.TempDir()
		b.Run(fmt.Sprintf("jobs=%d/plugin", n), func(b *testing.B) {
			for b.Loop() {
				if _, errOut, code := plugin(b, cache, "", "list", "-n", ns); code != 0 {
					b.Fatal(errOut)
				}
			}
		})
		b.Run(fmt.Sprintf("jobs=%d/client-go", n), func(b *testing.B) {
			for b.Loop() {
				opts := metav1.ListOptions{Limit: 500}
				for {
					l, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), opts)
					if err != nil {
						b.Fatal(err)
					}
					if opts.Continue = l.GetContinue(); opts.Continue == "" {
						break
					}
				}
			}
		})
	}
}

func createJobs(b *testing.B, ns string, n int) {
	ctx := context.Background()
	server.CreateNamespace(b, ns)
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			return k8s.Create(ctx, &v1beta1.MxJob{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("job-%04d", i)},
				Spec: v1beta1.MxJobSpec{JobMode: v1beta1.DistMode, ReplicaSpecs: []v1beta1.ReplicaSpec{
					{MxReplicaType: v1beta1.ReplicaTypeScheduler, Replicas: ptr.To[int32](1)},
					{MxReplicaType: v1beta1.ReplicaTypeServer, Replicas: ptr.To[int32](2)},
					{MxReplicaType: v1beta1.ReplicaTypeWorker, Replicas: ptr.To[int32](4), Template: &corev1.PodTemplateSpec{
						Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mxnet", Image: "mxnet:1.9", Command: []string{"python", "train.py"}}}},
					}},
				}},
			})
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}
