package cluster

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/internal/images"
)

// metricsServerManifest is metrics-server's RBAC, Service, Deployment and APIService.
//
//go:embed metrics-server.yaml
var metricsServerManifest []byte

// MetricsServerDeadline bounds the wait for metrics.k8s.io to report every node. On an idle
// machine it takes under a minute (readiness needs a first scrape, node CPU a second one, 15s
// apart); the rest is room for a loaded one.
const MetricsServerDeadline = 3 * time.Minute

// InstallMetricsServer gives p's cluster metrics.k8s.io on any provider: it builds the
// metrics-server image (the binary is cached by hack/build/pinned.sh), loads it into every node,
// applies metrics-server.yaml and returns once GET /apis/metrics.k8s.io/v1beta1/nodes
// answers for every node, or with an error saying what was last seen and where to look.
func InstallMetricsServer(ctx context.Context, p Provider, logf func(string, ...any)) error {
	began := time.Now()
	cfg, err := loadImage(ctx, p, images.MetricsServer)
	if err != nil {
		return err
	}
	if err := applyMetricsServer(ctx, cfg); err != nil {
		return err
	}
	if err := waitNodeMetrics(ctx, cfg, MetricsServerDeadline); err != nil {
		return err
	}
	logf("metrics.k8s.io reports every node after %v", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// metricsServerObjects decodes metricsServerManifest, in the order its documents come.
func metricsServerObjects() ([]*unstructured.Unstructured, error) {
	return manifestObjects("metrics-server.yaml", metricsServerManifest)
}

// manifestObjects decodes the YAML documents of the manifest name, in order.
func manifestObjects(name string, manifest []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// applyMetricsServer applies every object server-side, so running it again on a cluster that has
// them is harmless.
func applyMetricsServer(ctx context.Context, cfg *rest.Config) error {
	objs, err := metricsServerObjects()
	if err != nil {
		return err
	}
	return applyObjects(ctx, cfg, "metrics-server", objs)
}

// applyObjects applies objs server-side, in order; what names them in errors.
func applyObjects(ctx context.Context, cfg *rest.Config, what string, objs []*unstructured.Unstructured) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	for _, u := range objs {
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("mlkube-e2e"), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("applying %s's %s %s: %w", what, u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// waitNodeMetrics calls metrics.k8s.io until it has a sample of every node, as `kubectl top
// nodes` would: a ready Deployment is not enough, the API server must reach it through the
// APIService and it must have scraped every kubelet.
func waitNodeMetrics(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	err = pollUntil(ctx, timeout, 2*time.Second, func(ctx context.Context) error { return nodeMetricsComplete(ctx, cs, mc) })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("metrics.k8s.io did not report every node within %v: %w (%s); see "+
			"'hack/cluster/kubectl.sh -n kube-system get pods,apiservice -l k8s-app=metrics-server' and "+
			"'hack/cluster/kubectl.sh -n kube-system logs deploy/metrics-server'", timeout, err, apiServiceAvailable(ctx, c))
	}
	return err
}

// pollUntil calls check every interval until it returns nil, and returns nil; or, once timeout
// has passed, the last error check returned before then (not the deadline's own); or ctx's error
// when ctx ends first.
func pollUntil(ctx context.Context, timeout, interval time.Duration, check func(context.Context) error) error {
	deadline, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		err := check(deadline)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// A call the deadline cut short says nothing about the thing waited for.
		if deadline.Err() == nil || last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.Done():
			return last
		case <-time.After(interval):
		}
	}
}

// apiServiceAvailable says whether the API server reaches metrics-server, and if not why, as its
// APIService's Available condition tells (e.g. a failing discovery check and its error).
func apiServiceAvailable(ctx context.Context, c client.Reader) string {
	const name = "v1beta1.metrics.k8s.io"
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
		return fmt.Sprintf("APIService %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cond := range conds {
		m, _ := cond.(map[string]any)
		if m["type"] == "Available" {
			return fmt.Sprintf("APIService %s Available=%v %v: %v", name, m["status"], m["reason"], m["message"])
		}
	}
	return fmt.Sprintf("APIService %s has no Available condition yet", name)
}

// nodeMetricsComplete is nil once GET /apis/metrics.k8s.io/v1beta1/nodes lists every node.
func nodeMetricsComplete(ctx context.Context, cs kubernetes.Interface, mc metricsclient.Interface) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return errors.New("the cluster has no nodes")
	}
	metrics, err := mc.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	if missing := nodesWithoutMetrics(nodes.Items, metrics.Items); len(missing) > 0 {
		return fmt.Errorf("no metrics yet for node(s) %v", missing)
	}
	return nil
}

// nodesWithoutMetrics names the nodes that have no NodeMetrics, sorted.
func nodesWithoutMetrics(nodes []corev1.Node, metrics []metricsv1beta1.NodeMetrics) []string {
	have := map[string]bool{}
	for _, m := range metrics {
		have[m.Name] = true
	}
	var missing []string
	for _, n := range nodes {
		if !have[n.Name] {
			missing = append(missing, n.Name)
		}
	}
	slices.Sort(missing)
	return missing
}

// loadImage builds spec's image (cached by its inputs), loads it into every node of p and returns
// the cluster's client configuration.
func loadImage(ctx context.Context, p Provider, spec images.Spec) (*rest.Config, error) {
	b, err := images.RepoBuilder()
	if err != nil {
		return nil, err
	}
	tarball, err := b.Build(ctx, spec)
	if err != nil {
		return nil, err
	}
	if err := p.LoadImages(ctx, []string{tarball}); err != nil {
		return nil, fmt.Errorf("loading %s: %w", spec.Ref, err)
	}
	return clientcmd.BuildConfigFromFlags("", p.Kubeconfig())
}
