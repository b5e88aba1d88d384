package suite

import (
	"context"
	"net"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
)

// attackerPort is where an attacker pod of the pod network serves (the testserver's default).
const attackerPort = 8080

// nodeNetworkAttackerPort is where the hostNetwork attacker serves: it binds on the node itself,
// so it keeps clear of 8080, which anything else of the node may hold.
const nodeNetworkAttackerPort = 18080

// attackerPod is a testserver pod in ns on node, serving on port, with neither a data path token nor
// the node's data root: a client that reaches the transformer and holds nothing of mlkube's.
func attackerPod(ns, node string, port int32) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "attacker", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "attacker", Image: clientImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Env:            []corev1.EnvVar{{Name: "PORT", Value: strconv.Itoa(int(port))}},
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
			}},
		},
	}
}

// proxyTo is a GET through the API server's pod proxy to the port pod serves on.
func proxyTo(pod *corev1.Pod) *rest.Request {
	port := strconv.Itoa(int(pod.Spec.Containers[0].Ports[0].ContainerPort))
	return clientset.CoreV1().RESTClient().Get().Namespace(pod.Namespace).Resource("pods").Name(pod.Name + ":" + port).SubResource("proxy")
}

// hostileFetch makes the testserver pod send method to u with headers ("Name: value"), without
// a data path token: a client that reaches the transformer but is not the node agent.
func hostileFetch(pod *corev1.Pod, method, u string, headers ...string) (int, string) {
	req := proxyTo(pod).Suffix("fetch").Param("url", u).Param("token", "none").Param("method", method)
	for _, h := range headers {
		req = req.Param("header", h)
	}
	return proxyResult(req.Do(context.Background()))
}

// transformerRefuses starts the attacker pod, puts an object in a new namespace A with an fqn
// Transform on the attacker's node, and checks that the attacker, reaching A's transformer
// directly (the local test network enforces no NetworkPolicy, so only the credential stands in
// its way), is refused with 401 for an fqn read, with a made-up credential, for an hpull ?src=
// pointed at the attacker's own listener (which must see no connection), and for a WebSocket
// upgrade. GET /health must answer first, so the refusals are the transformer's, not a routing
// failure.
func transformerRefuses(t *testing.T, attacker *corev1.Pod) {
	t.Helper()
	node := attacker.Spec.NodeName
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

	attacker = startPod(t, attacker)
	from := "pod " + attacker.Namespace + "/" + attacker.Name
	if attacker.Spec.HostNetwork {
		from += " on node " + node + "'s network"
	}
	if code, body := hostileFetch(attacker, "GET", base+wire.PathHealth); code != 200 || body != wire.HealthOK {
		t.Fatalf("GET /health from %s: %d %q, want 200: the transformer must be reachable for the refusals below to mean anything", from, code, body)
	}
	port := strconv.Itoa(int(attacker.Spec.Containers[0].Ports[0].ContainerPort))
	canary := "http://" + net.JoinHostPort(attacker.Status.PodIP, port) + "/canary/" + "object"
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
			if code, body := hostileFetch(attacker, tc.method, tc.u, tc.headers...); code != 401 {
				t.Errorf("%s %s from %s: %d %q, want 401", tc.method, tc.u, from, code, body)
			}
		})
	}
	code, hits := proxyResult(proxyTo(attacker).Suffix("canary-count").Do(context.Background()))
	if code != 200 || hits != "0" {
		t.Errorf("the listener of %s saw %s requests (%d): the transformer fetched the forged ?src=", from, hits, code)
	}
}

// TestOtherNamespaceCannotReadTransformer (issue 24, finding 3): a pod of another namespace is
// refused by namespace A's fqn transformer (see transformerRefuses).
func TestOtherNamespaceCannotReadTransformer(t *testing.T) {
	transformerRefuses(t, attackerPod(bareNamespace(t), readyNodes(t)[0], attackerPort))
}

// TestNodeNetworkCannotReadTransformer (issue 24, finding 3): a hostNetwork pod, which speaks
// from the node's own address (traffic that many CNIs let past every NetworkPolicy), is refused
// by namespace A's fqn transformer on the same node (see transformerRefuses). Its namespace says
// it admits privileged pods, so the attacker is admitted whatever the cluster's default Pod
// Security level.
func TestNodeNetworkCannotReadTransformer(t *testing.T) {
	ns := labelledNamespace(t, map[string]string{"pod-security.kubernetes.io/enforce": "privileged"})
	pod := attackerPod(ns, readyNodes(t)[0], nodeNetworkAttackerPort)
	pod.Spec.HostNetwork = true
	transformerRefuses(t, pod)
}
