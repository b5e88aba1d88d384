package suite

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// forwardToAgent port-forwards a local port to the node agent on node, as `kubectl port-forward`
// does, and returns its base URL; the forward ends with the test.
func forwardToAgent(t *testing.T, node string) string {
	t.Helper()
	return forwardTo(t, dataPathNamespace, client.MatchingLabels{"app.kubernetes.io/component": "node-agent"}, client.MatchingFields{"spec.nodeName": node}, 8080)
}

// forwardTo port-forwards a local port to port of the one pod of namespace ns that the options
// select, and returns its base URL; the forward ends with the test.
func forwardTo(t *testing.T, ns string, selector client.MatchingLabels, fields client.MatchingFields, port int) string {
	t.Helper()
	var pods corev1.PodList
	if err := k8s.List(context.Background(), &pods, client.InNamespace(ns), selector, fields); err != nil || len(pods.Items) != 1 {
		t.Fatalf("the pod %v %v of namespace %s: %d pods, %v", selector, fields, ns, len(pods.Items), err)
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := clientset.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").
		Name(pods.Items[0].Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, ready := make(chan struct{}), make(chan struct{})
	var errOut bytes.Buffer
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, &errOut)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	t.Cleanup(func() { close(stop); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("port-forward to %s: %v %s", pods.Items[0].Name, err, errOut.String())
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		t.Fatalf("forwarded ports %v, %v", ports, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local)
}

// TestDataPathFromOutsideTheCluster: a caller outside the cluster (the plugins' path) reaches a
// node's agent through a port-forward with a token from the TokenRequest API for a
// ServiceAccount of the namespace (`kubectl create token mlkube-cli --audience mlkube-datapath`),
// and acts with that namespace identity; its own credentials never reach the agent.
func TestDataPathFromOutsideTheCluster(t *testing.T) {
	node, ns, _, tr := md5OnANode(t, v1alpha1.CommWS)
	putObjects(t, ns, node, map[string][]byte{"far.txt": []byte("read from afar")})
	base := forwardToAgent(t, node)
	token := dataPathToken(t, ns, cliServiceAccount)
	call := func(method, path, token string, body []byte) (int, string) {
		return callAgent(t, base, method, path, token, body)
	}
	object := wire.ObjectPath("far.txt")
	if code, body := call("GET", "/v1/transform/"+ns+"/"+tr.Name+object, token, nil); code != 200 || body != md5hex([]byte("read from afar")) {
		t.Errorf("GET with the namespace's token: %d %q", code, body)
	}
	if code, body := call("PUT", "/v1/transform/"+ns+"/"+tr.Name+"/body", token, []byte("a body")); code != 200 || body != md5hex([]byte("a body")) {
		t.Errorf("PUT with the namespace's token: %d %q", code, body)
	}
	// The test's own API server credentials (if a token) are not a data path token.
	if code, body := call("GET", "/v1/transform/"+ns+"/"+tr.Name+object, cfg.BearerToken, nil); code != 401 {
		t.Errorf("with the API server's credentials: %d %q, want 401", code, body)
	}
}
