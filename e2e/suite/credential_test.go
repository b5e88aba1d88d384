package suite

import (
	"context"
	"net"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
)

// hostileFetch makes pod ns/pod send method to u with headers ("Name: value"), without its data
// path token: a client that reaches the transformer but is not the node agent.
func hostileFetch(t *testing.T, ns, pod, method, u string, headers ...string) (int, string) {
	t.Helper()
	req := clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(pod+":8080").
		SubResource("proxy").Suffix("fetch").Param("url", u).Param("token", "none").Param("method", method)
	for _, h := range headers {
		req = req.Param("header", h)
	}
	return proxyResult(req.Do(context.Background()))
}

// TestOtherNamespaceCannotReadTransformer (issue 24, finding 3): a pod of another namespace that
// reaches namespace A's fqn transformer directly (the local test network enforces no
// NetworkPolicy, so only the credential stands in its way) is refused with 401 for an fqn read,
// with a made-up credential, for an hpull ?src= pointed at itself (which it sees no connection
// from), and for a WebSocket upgrade. GET /health answers first, so the refusals are the
// transformer's, not a routing failure.
func TestOtherNamespaceCannotReadTransformer(t *testing.T) {
	node := readyNodes(t)[0]
	nsA := namespace(t)
	tr := builders.Transform("md5").Namespace(nsA).Runtime("mlkube/transformer-md5:dev").Spec(func(s *v1alpha1.TransformSpec) {
		s.Argument = v1alpha1.ArgFQN
	}).Obj()
	k8s.MustCreate(t, tr)
	running := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	putObjects(t, nsA, node, map[string][]byte{"secret.txt": []byte("namespace a's secret")})
	var base string
	for _, n := range running.Status.Nodes {
		if n.Node == node {
			base = "http://" + net.JoinHostPort(n.IP, strconv.Itoa(int(n.Port)))
		}
	}
	if base == "" {
		t.Fatalf("no transformer on %s in status %+v", node, running.Status.Nodes)
	}

	nsB := bareNamespace(t)
	clientB := clientOn(t, nsB, node)
	if code, body := hostileFetch(t, nsB, clientB, "GET", base+wire.PathHealth); code != 200 || body != wire.HealthOK {
		t.Fatalf("GET /health from namespace %s: %d %q, want 200: the transformer must be reachable for the refusals below to mean anything", nsB, code, body)
	}
	var podB corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: nsB, Name: clientB}, &podB); err != nil {
		t.Fatal(err)
	}
	canary := "http://" + net.JoinHostPort(podB.Status.PodIP, "8080") + "/canary/" + "object"
	fqn := wire.DataRoot + "/secret.txt"
	for name, tc := range map[string]struct {
		method, u string
		headers   []string
	}{
		"fqn":                {"PUT", wire.ObjectURL(base, "secret.txt", wire.Query{FQN: fqn}), nil},
		"made-up credential": {"PUT", wire.ObjectURL(base, "secret.txt", wire.Query{FQN: fqn}), []string{wire.HeaderTransformerToken + ": k1.madeup"}},
		"src to itself":      {"GET", wire.ObjectURL(base, "secret.txt", wire.Query{Src: canary}), nil},
		"ws upgrade": {"GET", base + wire.PathWS, []string{
			"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			if code, body := hostileFetch(t, nsB, clientB, tc.method, tc.u, tc.headers...); code != 401 {
				t.Errorf("%s %s from namespace %s: %d %q, want 401", tc.method, tc.u, nsB, code, body)
			}
		})
	}
	code, hits := proxyResult(clientset.CoreV1().RESTClient().Get().Namespace(nsB).Resource("pods").Name(clientB + ":8080").
		SubResource("proxy").Suffix("canary-count").Do(context.Background()))
	if code != 200 || hits != "0" {
		t.Errorf("namespace %s's listener saw %s requests (%d): the transformer fetched the forged ?src=", nsB, hits, code)
	}
}
