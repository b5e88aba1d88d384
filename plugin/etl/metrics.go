package etl

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

func newTopCommand(env *cli.Env) *cobra.Command {
	return newInspectCommand(env, &cobra.Command{
		Use:     "top NAME",
		Aliases: []string{"metrics"},
		Short:   "Show the CPU and memory a Transform's transformer uses on each node (metrics.k8s.io)",
		Long: `Show the CPU and memory of each node's transformer pod, from the cluster's metrics API
(metrics.k8s.io, served by metrics-server), as kubectl top pod does.`,
		Example: `  # CPU and memory of md5's transformers
  kubectl etl top md5

  # The PodMetrics themselves
  kubectl etl top md5 -o yaml`,
	}, "Transform %s runs on no node.", func(ctx context.Context, t *v1alpha1.Transform) (*metav1.Table, []runtime.Object, error) {
		c, err := env.Clients.Client()
		if err != nil {
			return nil, nil, err
		}
		usage, objs, err := transformerUsage(ctx, c, t)
		if err != nil {
			return nil, nil, err
		}
		return UsageTable(t, usage), objs, nil
	})
}

// podMetricsKind is read as unstructured: the few fields used do not warrant linking the
// k8s.io/metrics module.
var podMetricsKind = schema.GroupVersionKind{Group: "metrics.k8s.io", Version: "v1beta1", Kind: "PodMetrics"}

// transformerUsage reads the PodMetrics of each node's transformer pod. A pod the metrics API
// has no sample of yet is unknown, not an error; a cluster without the API is.
func transformerUsage(ctx context.Context, c client.Reader, t *v1alpha1.Transform) ([]NodeUsage, []runtime.Object, error) {
	var usage []NodeUsage
	var objs []runtime.Object
	for _, n := range t.Status.Nodes {
		u := NodeUsage{Node: n.Node, Pod: n.Pod}
		if n.Pod != "" {
			pm := &unstructured.Unstructured{}
			pm.SetGroupVersionKind(podMetricsKind)
			err := c.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: n.Pod}, pm)
			switch {
			case meta.IsNoMatchError(err) || apierrors.IsServiceUnavailable(err):
				return nil, nil, fmt.Errorf("the cluster serves no metrics API (metrics.k8s.io): install metrics-server to see CPU and memory (%w)", err)
			case apierrors.IsNotFound(err):
			case err != nil:
				return nil, nil, err
			default:
				if u.MilliCPU, u.MemoryBytes, err = containersUsage(pm); err != nil {
					return nil, nil, fmt.Errorf("PodMetrics %s: %w", n.Pod, err)
				}
				u.Known = true
				objs = append(objs, pm)
			}
		}
		usage = append(usage, u)
	}
	return usage, objs, nil
}

// containersUsage sums the CPU and memory of a PodMetrics' containers.
func containersUsage(pm *unstructured.Unstructured) (milliCPU, memory int64, err error) {
	containers, _, err := unstructured.NestedSlice(pm.Object, "containers")
	if err != nil {
		return 0, 0, err
	}
	for _, c := range containers {
		usage, _, _ := unstructured.NestedStringMap(c.(map[string]any), "usage")
		cpu, err := resource.ParseQuantity(usage["cpu"])
		if err != nil {
			return 0, 0, fmt.Errorf("cpu: %w", err)
		}
		mem, err := resource.ParseQuantity(usage["memory"])
		if err != nil {
			return 0, 0, fmt.Errorf("memory: %w", err)
		}
		milliCPU += cpu.MilliValue()
		memory += mem.Value()
	}
	return milliCPU, memory, nil
}
