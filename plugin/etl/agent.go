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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

// cliServiceAccount is the data path identity of kubectl etl's commands unless --service-account
// names another: a ServiceAccount of its own, so that binding it to a data path role gives no
// rights to the pods that run as the namespace's default ServiceAccount.
const cliServiceAccount = "mlkube-cli"

// NewTokenRequester issues data path tokens with the TokenRequest API of cs, as `kubectl create
// token SA --audience mlkube-datapath` does. The ServiceAccount mlkube-cli is created the first
// time a token is asked for it, with a line on errOut that says how to grant it the data path.
func NewTokenRequester(cs kubernetes.Interface, errOut io.Writer) TokenIssuer {
	return tokenRequester{cs: cs, errOut: errOut}
}

type tokenRequester struct {
	cs     kubernetes.Interface
	errOut io.Writer
}

func (r tokenRequester) Token(ctx context.Context, namespace, serviceAccount string) (string, error) {
	tok, err := r.createToken(ctx, namespace, serviceAccount)
	if apierrors.IsNotFound(err) && serviceAccount == cliServiceAccount {
		if err = r.createServiceAccount(ctx, namespace); err == nil {
			tok, err = r.createToken(ctx, namespace, serviceAccount)
		}
	}
	if err != nil {
		return "", fmt.Errorf("a data path token for ServiceAccount %s:%s: %w (pass --service-account to use another)", namespace, serviceAccount, err)
	}
	return tok, nil
}

func (r tokenRequester) createToken(ctx context.Context, namespace, serviceAccount string) (string, error) {
	tok, err := r.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, serviceAccount,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{wire.Audience}}}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return tok.Status.Token, nil
}

// createServiceAccount creates mlkube-cli in namespace, which an editor of the namespace may (the
// built-in edit allows creating ServiceAccounts and their tokens). If another command created it
// meanwhile, that one said so.
func (r tokenRequester) createServiceAccount(ctx context.Context, namespace string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: cliServiceAccount, Namespace: namespace,
		Labels: map[string]string{"app.kubernetes.io/managed-by": "kubectl-etl"}}}
	_, err := r.cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return nil
	case err != nil:
		return fmt.Errorf("creating ServiceAccount %s, the data path identity: %w", cliServiceAccount, err)
	}
	fmt.Fprintf(r.errOut, "created serviceaccount %s in %s for the data path; grant it with: %s (docs/datapath-rbac.md)\n",
		cliServiceAccount, namespace, bindCommand(namespace, cliServiceAccount, cliServiceAccount+"-datapath", userRole))
	return nil
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
