// Command node-agent is mlkube's node data path agent, run by a DaemonSet on
// every node: it moves objects between the clients on its node and the
// node's transformer pods (package datapath/agent).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/agent"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/internal/objectstore"
	"github.com/mlkube/mlkube/internal/transformertoken"
	"github.com/mlkube/mlkube/internal/version"
)

// defaultPort is the agent's port, where the manager and kubectl etl reach it.
const defaultPort = wire.AgentPort

func main() {
	srv, opts, err := parseFlags(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err == nil && srv.version {
		fmt.Println(version.String("node-agent"))
		return
	}
	if err == nil && srv.csi {
		err = runCSI(srv, opts)
		if err == nil {
			return
		}
	}
	if err == nil && srv.prepare {
		err = prepareDataRoot(opts.DataRoot, srv.uid, srv.gid)
		if err == nil {
			return
		}
	}
	if err == nil {
		err = run(srv, opts)
	}
	if err != nil {
		slog.Error("node agent failed", "error", err)
		os.Exit(1)
	}
}

// serving is where the agent listens, how it reviews callers' tokens, and where it serves
// profiles; version asks for the version instead.
// TransformerKeyDir is where the DaemonSet mounts the Secret transformertoken.SecretName.
const TransformerKeyDir = "/var/run/secrets/mlkube.io/transformer-keys"

type serving struct {
	listen, pprof string
	review        access.Options
	version       bool
	// prepare asks to give the data root to uid:gid and exit (prepare.go).
	prepare  bool
	uid, gid int
	// keyDir holds the cluster keys the transformers' credentials are derived with.
	keyDir string
	// csi asks to serve the CSI driver data.mlkube.io instead of the agent (csi.go), with the
	// kubelet's directory kubeletDir.
	csi        bool
	kubeletDir string
}

// parseFlags reads the agent's flags from args and its environment through
// getenv.
func parseFlags(args []string, getenv func(string) string) (srv serving, opts agent.Options, err error) {
	opts = agent.DefaultOptions()
	opts.Node = getenv("NODE_NAME")
	srv.review = access.DefaultOptions(wire.Audience)
	fs := flag.NewFlagSet("node-agent", flag.ContinueOnError)
	fs.BoolVar(&srv.version, "version", false, "print the version and exit")
	fs.StringVar(&srv.listen, "listen", ":"+strconv.Itoa(defaultPort), "address the API listens on")
	fs.StringVar(&srv.pprof, "pprof-listen", "",
		"loopback address (127.0.0.1:port) to serve Go's profiles (/debug/pprof/) on, reached by port-forward; empty turns them off")
	fs.StringVar(&srv.review.Audience, "token-audience", srv.review.Audience, "the audience callers' ServiceAccount tokens must be issued for (docs/datapath-rbac.md)")
	fs.Float64Var(&srv.review.QPS, "review-qps", srv.review.QPS,
		"TokenReviews and SubjectAccessReviews a second the agent sends the API server for callers and requests not in its caches; more are refused with 429")
	fs.IntVar(&srv.review.Burst, "review-burst", srv.review.Burst, "reviews the agent may send at once above --review-qps")
	fs.StringVar(&opts.DataRoot, "data-root", wire.DataRoot, "the node's data directory; objects are named relative to it")
	fs.StringVar(&opts.AdvertiseURL, "advertise-url", advertiseURL(getenv("POD_IP"), defaultPort),
		"base URL transformers reach the agent at, for hpull (default http://$POD_IP:8080)")
	fs.Int64Var(&opts.MaxObjectSize, "max-object-size", opts.MaxObjectSize, "largest object in bytes; negative is no limit")
	fs.Int64Var(&opts.MinFreeBytes, "min-free-bytes", opts.MinFreeBytes, "free space of the data root an object PUT never takes; one that would is refused with 507")
	fs.Int64Var(&opts.NamespaceQuota, "namespace-quota", 0,
		"bytes each namespace may store on this node through the object API and its TransformRuns' results; 0 is no limit. A Namespace's annotation "+agent.QuotaAnnotation+" overrides it")
	fs.StringVar(&opts.PeerTokenFile, "peer-token-file", opts.PeerTokenFile, "the agent's own data path token, sent to the agents it forwards object requests to")
	fs.StringVar(&opts.PeerServiceAccount, "peer-service-account", opts.PeerServiceAccount, "the user whose token a forwarded object request must carry: the agents' ServiceAccount")
	fs.StringVar(&srv.keyDir, "transformer-key-dir", TransformerKeyDir,
		"the Secret "+transformertoken.SecretName+"'s volume: the keys the credential presented to each transformer is derived with; read again when it changes")
	fs.BoolVar(&opts.RequireTransformerAuth, "require-transformer-auth", false,
		"before a transformer pod's first object, send it "+agent.PathAuthProbe+" without the credential, and refuse (503) one that answers below 400: it would answer anyone who reaches it (docs/transforms.md#credential)")
	fs.BoolVar(&srv.prepare, "prepare-data-root", false,
		"give the data root to --data-root-uid:--data-root-gid with mode 0750 and exit (the DaemonSet's init container, as root)")
	fs.IntVar(&srv.uid, "data-root-uid", 65532, "with --prepare-data-root and --csi: the agent's user, given the data root and the namespace directories --csi makes")
	fs.IntVar(&srv.gid, "data-root-gid", 65532, "with --prepare-data-root and --csi: the agent's group")
	fs.BoolVar(&srv.csi, "csi", false,
		"serve the CSI driver "+wire.DataDriver+" until SIGTERM instead of the agent: it mounts the data root's directory of an fqn transformer pod's namespace into the pod, read-only (the DaemonSet's data-csi container, privileged)")
	fs.StringVar(&srv.kubeletDir, "kubelet-dir", "/var/lib/kubelet",
		"with --csi: the kubelet's directory (its --root-dir) on the host, mounted at the same path in the container; the driver's sockets are under it")
	fs.IntVar(&opts.WSConns, "ws-conns", opts.WSConns, "WebSocket connections kept per ws transformer")
	fs.IntVar(&opts.MaxOfflineRuns, "max-offline-runs", opts.MaxOfflineRuns, "runs (TransformRun shares) at once on the node, shared fairly among namespaces; more are refused with 429")
	fs.IntVar(&opts.MaxOfflineWorkers, "max-offline-workers", opts.MaxOfflineWorkers, "run workers at once on the node, across runs, shared fairly among namespaces; a run past it is refused with 429")
	fs.IntVar(&opts.MaxLargeStorePuts, "max-large-store-puts", opts.MaxLargeStorePuts, fmt.Sprintf("runs' results of over %d MiB going up to object stores at once, each holding a buffer of %d MiB; more wait for one to end, shared fairly among namespaces", objectstore.HeadSize>>20, objectstore.PartSize>>20))
	fs.IntVar(&opts.MaxStreams, "max-streams", opts.MaxStreams, "client streams ("+agent.PathStream+") open at once, shared fairly among namespaces; more are refused with 429")
	fs.IntVar(&opts.MaxInlineRequests, "max-inline-requests", opts.MaxInlineRequests,
		"inline requests ("+agent.PathTransform+") served at once on the node, each until its answer ends, shared fairly among namespaces; more are refused with 429")
	fs.DurationVar(&opts.StreamIdleTimeout, "stream-idle-timeout", opts.StreamIdleTimeout, "a client stream with no object in flight and none sent for this long is closed (1001)")
	fs.DurationVar(&opts.WriteTimeout, "write-timeout", opts.WriteTimeout, "a client stream, transformer connection or hpull transformer's fetch of its object that does not take one of the agent's writes for this long is closed; the object fails")
	fs.DurationVar(&opts.PingInterval, "ping-interval", opts.PingInterval, "how often client streams are pinged")
	srcHosts := fs.String("src-allowed-hosts", "",
		"comma-separated hosts (or *.domain) ?src= may fetch objects from; empty turns ?src= off")
	srcDenied := fs.String("src-denied-cidrs", "",
		"comma-separated networks ?src= never reaches, beyond those always refused (loopback, link-local, multicast, and the private 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10, fc00::/7): the cluster's pod and Service CIDRs and the API server where they are outside those")
	srcAllowed := fs.String("src-allowed-cidrs", "",
		"comma-separated networks ?src= may reach even when refused by default (private, loopback, link-local) or denied: an object store inside the cluster or on a private network")
	storesAllowed := fs.String("object-store-allowed-cidrs", "",
		"comma-separated networks the ObjectStores of TransformRuns may be on even when refused by default (private, loopback, link-local) or denied by --src-denied-cidrs: an object store inside the cluster or on a private network")
	if err := fs.Parse(args); err != nil {
		return srv, opts, err
	}
	if err := checkLoopback(srv.pprof); err != nil {
		return srv, opts, err
	}
	if err := checkReviewRate(srv.review); err != nil {
		return srv, opts, err
	}
	if err := checkCSI(srv, opts.DataRoot); err != nil {
		return srv, opts, err
	}
	if opts.Src, err = egress.Parse(*srcHosts, *srcDenied, *srcAllowed); err != nil {
		return srv, opts, err
	}
	opts.Stores, err = egress.StorePolicy(opts.Src.Denied, *storesAllowed)
	return srv, opts, err
}

// maxHeaderBytes bounds a request's headers: a request line with the
// longest object name and args (wire.MaxObjectName, wire.MaxArgs), even
// percent-encoded, and a token fit many times over; net/http's default is
// 1 MiB per request.
const maxHeaderBytes = 64 << 10

// resolverSettle is how long a request for a Transform the agent's cache sees not running waits
// for the cache to catch up with the API server (agent.CacheResolver.Settle): its watch lags the
// stage a user has already seen Running by well under this.
const resolverSettle = 3 * time.Second

// newServer serves h on listen with bounded headers and deadlines for idle
// clients and slow headers. It has no WriteTimeout (nor ReadTimeout): one
// bounds a whole answer, and would cut an object's legitimate long stream
// as surely as a stalled one. The handlers that stream bound each write
// instead (--write-timeout: an hpull transformer's fetch of its object, a
// client stream), within the object's own timeout.
func newServer(listen string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              listen,
		Handler:           h,
		MaxHeaderBytes:    maxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// checkLoopback refuses a profile address outside loopback: profiles answer anyone who reaches
// them, with no token asked, so they stay where only a port-forward (which the API server
// authorizes) gets.
func checkLoopback(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--pprof-listen=%q: give a loopback address such as 127.0.0.1:6060", addr)
	}
	return nil
}

// checkReviewRate refuses a review rate that is not positive: a zero rate would refuse every new
// caller, and the agent has no unlimited one, since each distinct bogus token or name a caller
// sends would cost the API server a review.
func checkReviewRate(o access.Options) error {
	if o.QPS <= 0 || o.Burst < 1 {
		return fmt.Errorf("--review-qps=%g --review-burst=%d: both must be positive", o.QPS, o.Burst)
	}
	return nil
}

// servePprof serves Go's profiles on addr until ctx ends.
func servePprof(ctx context.Context, addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := newServer(addr, mux)
	go func() { <-ctx.Done(); srv.Close() }()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		slog.Error("profiles not served", "listen", addr, "error", err)
	}
}

func advertiseURL(podIP string, port int) string {
	if podIP == "" {
		return ""
	}
	return "http://" + net.JoinHostPort(podIP, strconv.Itoa(port))
}

// start begins the agent's or the driver's run on node: it returns the context that SIGTERM ends.
func start(node string) (context.Context, context.CancelFunc, error) {
	if node == "" {
		return nil, nil, errors.New("NODE_NAME is not set")
	}
	// controller-runtime's cache and clients log with the agent, through slog. Unset, their logs
	// would be dropped and controller-runtime would print a stack trace saying so.
	ctrl.SetLogger(logr.FromSlogHandler(slog.Default().Handler()))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	return ctx, stop, nil
}

func run(s serving, opts agent.Options) error {
	ctx, stop, err := start(opts.Node)
	if err != nil {
		return err
	}
	defer stop()
	cfg := ctrl.GetConfigOrDie()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	// Every caller is reviewed by the API server, answers cached briefly. The client is not
	// throttled (controller-runtime's config turns client-side limits off): the reviewer, its only
	// user, refuses reviews past its own bucket (--review-qps) with 429 rather than queueing them.
	opts.Access = access.NewReviewer(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews(), s.review)
	transforms, err := cache.New(cfg, cache.Options{
		Scheme: scheme.New(),
		// Only what the agent reads of each Transform is kept (agent.TrimTransform).
		ByObject: map[client.Object]cache.ByObject{
			&etlv1alpha1.Transform{}: {Transform: agent.TrimTransform(opts.Node)},
			// The agents' own endpoints only: the peers of the object API.
			&discoveryv1.EndpointSlice{}: {
				Namespaces: map[string]cache.Config{wire.AgentNamespace: {}},
				Label:      labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: agent.AgentService}),
			},
		},
	})
	if err != nil {
		return fmt.Errorf("transform cache: %w", err)
	}
	// Starts the informers up front, so the first object does not wait for a
	// list. Namespaces are watched as metadata only, for their quota.
	namespaces := &metav1.PartialObjectMetadata{}
	namespaces.SetGroupVersionKind(agent.NamespaceGVK)
	for _, obj := range []client.Object{&etlv1alpha1.Transform{}, &discoveryv1.EndpointSlice{}, namespaces} {
		if _, err := transforms.GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("informer of %T: %w", obj, err)
		}
	}
	go func() {
		// Start blocks until ctx ends. Should it fail instead, the agent cannot
		// resolve a Transform: stop it, so that it exits and is restarted
		// rather than waiting for a sync that will not come.
		if err := transforms.Start(ctx); err != nil {
			slog.Error("transform cache failed", "error", err)
			stop()
		}
	}()
	if !transforms.WaitForCacheSync(ctx) {
		return errors.New("transform cache did not sync")
	}
	opts.Resolver = agent.CacheResolver{Reader: transforms, Node: opts.Node, Keys: transformertoken.NewKeys(s.keyDir), Settle: resolverSettle}
	opts.Peers = agent.EndpointSlicePeers{Reader: transforms}
	opts.NamespaceQuotaOf = agent.NamespaceQuotas(ctx, transforms)
	opts.StoreSecrets = agent.SecretsOf(cs.CoreV1())
	// ObjectStores are read when a caller lists one, not cached: listings are rare, and bounded
	// (agent.maxStoreLists).
	direct, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return fmt.Errorf("API client: %w", err)
	}
	opts.ObjectStores = agent.ObjectStoresOf(direct)
	a, err := agent.New(opts)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := prepareFQN(ctx, transforms, a); err != nil {
		return err
	}
	if s.pprof != "" {
		go servePprof(ctx, s.pprof)
	}
	srv := newServer(s.listen, a)
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	slog.Info("node agent serving", "version", version.Get(), "node", opts.Node, "listen", s.listen, "tokenAudience", s.review.Audience, "reviewQPS", s.review.QPS, "dataRoot", opts.DataRoot, "srcAllowedHosts", opts.Src.Hosts)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	// Below the pod's termination grace period: objects in flight finish.
	sctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// prepareFQN has the agent make the data directory of each fqn Transform's namespace as the
// Transform appears, before its transformer pods can mount it (Agent.PrepareFQN).
func prepareFQN(ctx context.Context, transforms cache.Cache, a *agent.Agent) error {
	inf, err := transforms.GetInformer(ctx, &etlv1alpha1.Transform{})
	if err != nil {
		return fmt.Errorf("informer of Transforms: %w", err)
	}
	prepare := func(obj any) {
		if t, ok := obj.(*etlv1alpha1.Transform); ok {
			if err := a.PrepareFQN(t); err != nil {
				slog.Error("fqn data directory", "error", err)
			}
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    prepare,
		UpdateFunc: func(_, obj any) { prepare(obj) },
	})
	return err
}
