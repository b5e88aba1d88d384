package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mlkube/mlkube/e2e/cluster"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/repo"
)

// SmokeEnv enables TestClusterSmoke: it creates and removes a real cluster (minutes, root).
const SmokeEnv = "MLKUBE_E2E_CLUSTER"

// identity is what the test server answers on GET /.
type identity struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
}

// TestClusterSmoke proves a provider's cluster is fit for the e2e suite: nodes Ready, a pod
// Running on each, cluster DNS, pod IPs across nodes, a Service with internalTrafficPolicy: Local
// answering each client from its own node, ClusterIPs reachable from the host (as the API server
// reaches webhooks), and a teardown that leaves nothing behind.
func TestClusterSmoke(t *testing.T) {
	if os.Getenv(SmokeEnv) == "" {
		t.Skipf("set %s=1 to create a real cluster", SmokeEnv)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p, err := cluster.Select()
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := p.(interface{ SetLogf(func(string, ...any)) }); ok {
		l.SetLogf(t.Logf)
	}
	// Down also after a failed Up: a half-made cluster must not stay.
	t.Cleanup(func() { down(t, p) })
	began := time.Now()
	if err := p.Up(ctx); err != nil {
		t.Fatalf("up: %v", err)
	}
	t.Logf("up: %v", time.Since(began).Round(100*time.Millisecond))

	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	tarball, err := images.Builder{Root: root, OutDir: t.TempDir()}.Build(ctx, images.TestServer)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.LoadImages(ctx, []string{tarball}); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", p.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	s := &smoke{t: t, ctx: ctx, cs: cs, ns: "smoke"}
	defer s.dumpOnFailure()
	s.create()
	pods := s.echoPodsPerNode()

	for node, pod := range pods {
		// By name, through cluster DNS: internalTrafficPolicy Local keeps every answer on the node.
		if from := s.answeringNodes(pod, "http://echo-local."+s.ns+".svc.cluster.local:8080/"); len(from) != 1 || !from[node] {
			t.Errorf("echo-local from %s answered by nodes %v, want only %s", node, from, node)
		}
		for other, target := range pods {
			if other == node {
				continue
			}
			if from := s.answeringNodes(pod, "http://"+target.Status.PodIP+":8080/"); len(from) != 1 || !from[other] {
				t.Errorf("pod IP on %s fetched from %s: answered by nodes %v", other, node, from)
			}
		}
	}
	// The control: without the Local policy the same requests reach both nodes, so the check
	// above can tell the policy works. (All answers from one node by chance: p = 2^-19.)
	for node, pod := range pods {
		if from := s.answeringNodes(pod, "http://echo-cluster."+s.ns+".svc.cluster.local:8080/"); len(from) != len(pods) {
			t.Errorf("echo-cluster from %s answered only by nodes %v", node, from)
		}
		break
	}
	s.expectDNS(pods)
	s.expectClusterIPFromHost()
}

type smoke struct {
	t   *testing.T
	ctx context.Context
	cs  kubernetes.Interface
	ns  string
}

func (s *smoke) create() {
	s.t.Helper()
	_, err := s.cs.CoreV1().Namespaces().Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{})
	if err == nil {
		_, err = s.cs.AppsV1().DaemonSets(s.ns).Create(s.ctx, echoDaemonSet(s.ns), metav1.CreateOptions{})
	}
	for name, policy := range map[string]corev1.ServiceInternalTrafficPolicy{
		"echo-local":   corev1.ServiceInternalTrafficPolicyLocal,
		"echo-cluster": corev1.ServiceInternalTrafficPolicyCluster,
	} {
		if err == nil {
			_, err = s.cs.CoreV1().Services(s.ns).Create(s.ctx, echoService(s.ns, name, policy), metav1.CreateOptions{})
		}
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// echoPodsPerNode waits for a Running, Ready echo pod on every node and returns them by node.
func (s *smoke) echoPodsPerNode() map[string]corev1.Pod {
	s.t.Helper()
	nodes, err := s.cs.CoreV1().Nodes().List(s.ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	var pods map[string]corev1.Pod
	s.eventually("an echo pod Running and Ready on each node", 3*time.Minute, func() error {
		list, err := s.cs.CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "app=echo"})
		if err != nil {
			return err
		}
		pods = map[string]corev1.Pod{}
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && podReady(p) {
				pods[p.Spec.NodeName] = p
			}
		}
		if len(pods) < len(nodes.Items) {
			return fmt.Errorf("%d of %d nodes have a ready echo pod", len(pods), len(nodes.Items))
		}
		return nil
	})
	return pods
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// probe asks the test server in pod (through the API server's pod proxy) to GET path?query.
func (s *smoke) probe(pod corev1.Pod, path string, params map[string]string) ([]byte, error) {
	return s.cs.CoreV1().Pods(pod.Namespace).ProxyGet("http", pod.Name, "8080", path, params).DoRaw(s.ctx)
}

// requestsPerCheck is how many requests a traffic-policy check sends.
const requestsPerCheck = 20

// answeringNodes fetches url from inside pod requestsPerCheck times and returns the nodes of the
// pods that answered. It waits for a first answer (kube-proxy may not have programmed the
// Service yet); every later request must be answered.
func (s *smoke) answeringNodes(pod corev1.Pod, url string) map[string]bool {
	s.t.Helper()
	fetch := func() (identity, error) {
		var id identity
		body, err := s.probe(pod, "fetch", map[string]string{"url": url})
		if err != nil {
			return id, fmt.Errorf("%w: %s", err, body)
		}
		if err := json.Unmarshal(body, &id); err != nil {
			return id, fmt.Errorf("%w: %s", err, body)
		}
		return id, nil
	}
	from := map[string]bool{}
	s.eventually(fmt.Sprintf("%s → %s", pod.Spec.NodeName, url), time.Minute, func() error {
		id, err := fetch()
		if err == nil {
			from[id.Node] = true
		}
		return err
	})
	for range requestsPerCheck - 1 {
		id, err := fetch()
		if err != nil {
			s.t.Fatalf("%s → %s: %v", pod.Spec.NodeName, url, err)
		}
		from[id.Node] = true
	}
	return from
}

// expectDNS: CoreDNS resolves the API server's Service from a pod on every node.
func (s *smoke) expectDNS(pods map[string]corev1.Pod) {
	s.t.Helper()
	svc, err := s.cs.CoreV1().Services(metav1.NamespaceDefault).Get(s.ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for node, pod := range pods {
		s.eventually("DNS from "+node, time.Minute, func() error {
			body, err := s.probe(pod, "lookup", map[string]string{"name": "kubernetes.default.svc.cluster.local"})
			if err != nil {
				return fmt.Errorf("%w: %s", err, body)
			}
			if !strings.Contains(string(body), `"`+svc.Spec.ClusterIP+`"`) {
				return fmt.Errorf("lookup answered %s, want %s", body, svc.Spec.ClusterIP)
			}
			return nil
		})
	}
}

// expectClusterIPFromHost: a process on the host (as the API server calling a webhook) reaches a
// ClusterIP. Its address is routed to the cluster's own bridge, so the request stays on this machine.
func (s *smoke) expectClusterIPFromHost() {
	s.t.Helper()
	svc, err := s.cs.CoreV1().Services(s.ns).Get(s.ctx, "echo-cluster", metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	s.eventually("ClusterIP from the host", time.Minute, func() error {
		resp, err := client.Get("http://" + svc.Spec.ClusterIP + ":8080/")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var id identity
		if err := json.Unmarshal(body, &id); err != nil {
			return fmt.Errorf("answer %q: %w", body, err)
		}
		if id.Node == "" {
			return fmt.Errorf("answer %q names no node", body)
		}
		return nil
	})
}

// eventually polls check until it succeeds or timeout passes, then fails the test with its last
// error.
func (s *smoke) eventually(what string, timeout time.Duration, check func() error) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			s.t.Fatalf("%s: %v", what, err)
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// dumpOnFailure logs what a person needs to see why: pods with their states, and events.
func (s *smoke) dumpOnFailure() {
	if !s.t.Failed() {
		return
	}
	ctx := context.Background()
	pods, _ := s.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	for _, p := range pods.Items {
		s.t.Logf("pod %s/%s on %s: %s %+v", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.ContainerStatuses)
	}
	events, _ := s.cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	for _, e := range events.Items {
		s.t.Logf("event %s %s/%s: %s %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
	}
}

// down removes the cluster; the local provider must also leave nothing behind.
func down(t *testing.T, p cluster.Provider) {
	began := time.Now()
	if err := p.Down(context.Background()); err != nil {
		t.Errorf("down: %v", err)
	}
	t.Logf("down: %v", time.Since(began).Round(100*time.Millisecond))
	if l, ok := p.(interface{ Leftovers() ([]string, error) }); ok {
		if left, err := l.Leftovers(); err != nil || len(left) > 0 {
			t.Errorf("left behind after down: %v (%v)", left, err)
		}
	}
}
