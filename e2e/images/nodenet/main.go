// Command nodenet is the pod network of the project's kind node image, where kind's own kindnetd
// cannot be built. It runs on every node (a hostNetwork DaemonSet, hack/cluster/kindnode/default-cni.yaml)
// and does two things from the Node objects: it writes the node's CNI config, a bridge over the
// node's pod CIDRs, and it routes every other node's pod CIDRs via that node's InternalIP, which
// works because all kind nodes sit on one L2 network.
//
//	nodenet [-cni-conf path] [-node-name name] [-resync duration]
//
// It needs NODE_NAME (or -node-name) and a service account that may get, list and watch nodes.
// With CONTROL_PLANE_ENDPOINT (host:port; kind sets it) it talks to the API server there instead of
// through the kubernetes Service, which needs kube-proxy, which needs a pod network first.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// The service account's credentials, as kubelet mounts them.
const (
	saTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	saCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
)

// defaultConflist is where containerd's CRI plugin looks for CNI configs on the kind node; the
// DaemonSet mounts that directory from the host.
const defaultConflist = "/etc/cni/net.d/10-nodenet.conflist"

// retryAfter is how soon a failed pass is tried again.
const retryAfter = 5 * time.Second

func main() {
	klog.InitFlags(nil)
	conflist := flag.String("cni-conf", defaultConflist, "the CNI config file to write")
	nodeName := flag.String("node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	resync := flag.Duration("resync", time.Minute, "how often to reinstall every route, in case something removed one")
	flag.Parse()
	if *nodeName == "" {
		klog.Exit("no node name: set NODE_NAME or -node-name")
	}

	// On SIGTERM nodenet exits and leaves its routes and config: a restarting nodenet must not cut
	// the pod network, and the next run adopts the routes (see routeProtocol).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := restConfig(os.Getenv("CONTROL_PLANE_ENDPOINT"), rest.InClusterConfig)
	if err != nil {
		klog.Exit(err)
	}
	cfg = rest.AddUserAgent(cfg, "nodenet")
	client, err := corev1client.NewForConfig(cfg)
	if err != nil {
		klog.Exit(err)
	}

	var table kernelRoutes
	adopted, err := table.Installed()
	if err != nil {
		// Without them, routes of nodes deleted while nodenet was down stay; everything else works.
		klog.Errorf("listing routes left by an earlier run: %v", err)
	}
	r := newReconciler(*nodeName, *conflist, table, adopted)
	klog.Infof("nodenet on node %s, API server %s, %d routes adopted", *nodeName, cfg.Host, len(adopted))
	if err := run(ctx, client.RESTClient(), r, *resync); err != nil && !errors.Is(err, context.Canceled) {
		klog.Exit(err)
	}
}

// restConfig returns the API server configuration: in-cluster, but with the host replaced by
// endpoint when it is set, keeping the service account's token and CA. It does not go through
// rest.InClusterConfig then, which insists on KUBERNETES_SERVICE_HOST.
func restConfig(endpoint string, inCluster func() (*rest.Config, error)) (*rest.Config, error) {
	if endpoint == "" {
		return inCluster()
	}
	if _, _, err := net.SplitHostPort(endpoint); err != nil {
		return nil, fmt.Errorf("CONTROL_PLANE_ENDPOINT %q: want host:port: %w", endpoint, err)
	}
	return &rest.Config{
		Host: "https://" + endpoint,
		// A token file rather than the token: client-go rereads it, and kubelet rotates it.
		BearerTokenFile: saTokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAFile: saCAFile},
	}, nil
}

// run watches the nodes and reconciles on every change, and every resync with force, until ctx
// ends. The informer lists and watches again by itself after any error, with backoff.
func run(ctx context.Context, c cache.Getter, r *reconciler, resync time.Duration) error {
	// One pending kick is enough: a pass reads the whole store, so it covers every event before it.
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	store, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: cache.NewListWatchFromClient(c, "nodes", "", fields.Everything()),
		ObjectType:    &corev1.Node{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { poke() },
			UpdateFunc: func(any, any) { poke() },
			DeleteFunc: func(any) { poke() },
		},
	})
	go informer.RunWithContext(ctx)
	// Not before the first full list: a partial one would look like deleted nodes and drop routes.
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		return ctx.Err()
	}

	ticker := time.NewTicker(resync)
	defer ticker.Stop()
	var retry <-chan time.Time
	for {
		force := false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-kick:
		case <-retry:
			force = true
		case <-ticker.C:
			force = true
		}
		retry = nil
		if !r.reconcile(nodesIn(store.List()), force) {
			retry = time.After(retryAfter)
		}
	}
}

// nodesIn returns the store's nodes; anything else in it is logged and skipped, never trusted.
func nodesIn(objs []any) []*corev1.Node {
	nodes := make([]*corev1.Node, 0, len(objs))
	for _, o := range objs {
		n, ok := o.(*corev1.Node)
		if !ok {
			klog.Warningf("skipping a %T in the node store", o)
			continue
		}
		nodes = append(nodes, n)
	}
	return nodes
}
