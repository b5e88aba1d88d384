package etl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	klabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"

	"github.com/mlkube/mlkube/api/wire"
)

// agentSelector selects the data path agents' pods.
var agentSelector = klabels.SelectorFromSet(wire.AgentLabels()).String()

// tokenRequester issues tokens with the TokenRequest API, as `kubectl create token SA
// --audience mlkube-datapath` does.
type tokenRequester struct{ cs kubernetes.Interface }

func (r tokenRequester) Token(ctx context.Context, namespace, serviceAccount string) (string, error) {
	tok, err := r.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{wire.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a data path token for ServiceAccount %s:%s: %w (pass --service-account to use another)", namespace, serviceAccount, err)
	}
	return tok.Status.Token, nil
}

// portForwarder reaches an agent as `kubectl -n mlkube-datapath port-forward pod/<agent> 8080`
// does, on a free local port.
type portForwarder struct {
	cs  kubernetes.Interface
	cfg *rest.Config
}

func (f portForwarder) Forward(ctx context.Context, node string) (string, func(), error) {
	pod, err := f.agentPod(ctx, node)
	if err != nil {
		return "", nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(f.cfg)
	if err != nil {
		return "", nil, err
	}
	u := f.cs.CoreV1().RESTClient().Post().Namespace(wire.AgentNamespace).Resource("pods").Name(pod).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stopCh, ready := make(chan struct{}), make(chan struct{})
	var errOut bytes.Buffer
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(wire.AgentPort)}, stopCh, ready, io.Discard, &errOut)
	if err != nil {
		return "", nil, err
	}
	// forwardErr is read only after done is closed. Once the transfer is over and stop called,
	// an error of the forward has nothing left to act on.
	var forwardErr error
	done := make(chan struct{})
	go func() { forwardErr = pf.ForwardPorts(); close(done) }()
	stop := func() { close(stopCh); <-done }
	select {
	case <-ready:
	case <-done:
		return "", nil, fmt.Errorf("port-forward to the data path agent %s/%s: %w %s", wire.AgentNamespace, pod, forwardErr, errOut.String())
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		stop()
		return "", nil, fmt.Errorf("port-forward to %s/%s: ports %v: %w", wire.AgentNamespace, pod, ports, err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", ports[0].Local), stop, nil
}

// agentPod is the running agent pod of node, or with node empty the first Ready one of any node:
// every agent answers the object API for every node.
func (f portForwarder) agentPod(ctx context.Context, node string) (string, error) {
	opts := metav1.ListOptions{LabelSelector: agentSelector}
	if node != "" {
		opts.FieldSelector = "spec.nodeName=" + node
	}
	pods, err := f.cs.CoreV1().Pods(wire.AgentNamespace).List(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("finding the data path agent of node %s: %w", node, err)
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && (node != "" || podReady(&p)) {
			return p.Name, nil
		}
	}
	if node == "" {
		return "", fmt.Errorf("no Ready data path agent in namespace %s; is mlkube deployed there?", wire.AgentNamespace)
	}
	return "", fmt.Errorf("no running data path agent on node %s in namespace %s; is mlkube deployed there?", node, wire.AgentNamespace)
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// maxParallel bounds the requests a command sends at once through one port-forward (cp's
// --parallel): each is a stream of the forward and, for cp, an open file.
const maxParallel = 256

// dataPathClient is the HTTP client to agents. cp sends up to maxParallel requests at once over
// one port-forward: as many idle connections are kept for the next objects, instead of the two
// of http.DefaultTransport that would make every other request open a new stream. Objects travel
// as they are, so the transport asks for no compression.
func dataPathClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns:        maxParallel,
		MaxIdleConnsPerHost: maxParallel,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}
