package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/datapath/internal/dataroot"
	"github.com/mlkube/mlkube/datapath/internal/panics"
	"github.com/mlkube/mlkube/datapath/noderun"
	"github.com/mlkube/mlkube/internal/bufpool"
	"github.com/mlkube/mlkube/internal/egress"
	"github.com/mlkube/mlkube/internal/h1client"
	"github.com/mlkube/mlkube/internal/status"
)

// Options configure an Agent.
type Options struct {
	// Node is the node the agent serves, reported in errors and stats.
	Node string
	// DataRoot is the node's data directory. Each namespace's objects are
	// under DataRoot/<namespace>, named relative to it.
	DataRoot string
	// TransformerDataRoot is where fqn transformers see their namespace's
	// directory of the data root (mounted read-only; wire.DataRoot).
	TransformerDataRoot string
	// Access authenticates and authorizes every caller (access.Reviewer);
	// the agent refuses to start without one.
	Access Authorizer
	// AdvertiseURL is the agent's base URL as transformers reach it
	// ("http://<pod IP>:<port>"), for hpull sources.
	AdvertiseURL string
	// MaxObjectSize bounds an object in bytes; negative is no limit.
	MaxObjectSize int64
	// WSConns is the number of WebSocket connections kept per ws
	// transformer.
	WSConns int
	// MaxOfflineRuns bounds the runs (TransformRun shares, see
	// wire.NodeRunsPath) going on at once on the node, and
	// MaxOfflineWorkers their workers together; a run past either is
	// refused with 429.
	MaxOfflineRuns, MaxOfflineWorkers int
	// MaxLargeStorePuts bounds the runs' results of over objectstore.HeadSize going up to
	// object stores at once: each holds a part buffer of objectstore.PartSize, and more wait.
	MaxLargeStorePuts int
	// MaxStreams bounds the client streams (PathStream) open at once; one
	// past it is refused with 429 before the upgrade.
	MaxStreams int
	// MaxInlineRequests bounds the inline requests (PathTransform) served
	// at once, from admission to the end of the answer; one past it is
	// refused with 429.
	MaxInlineRequests int
	// StreamIdleTimeout closes a client stream with no object in flight
	// and none sent for that long (status 1001).
	StreamIdleTimeout time.Duration
	// StreamReauthorize is how long an open client stream's authorization
	// stands: the next object after it asks the Authorizer again, and a
	// refusal closes the stream (1008). 0 asks before every object.
	StreamReauthorize time.Duration
	// WriteTimeout bounds each write to a client stream, a pooled
	// transformer connection or an hpull transformer's fetch of its object:
	// a peer that stops reading is dropped rather than holding the agent's
	// buffers (and its object, its request slot or its run). PingInterval
	// is how often client streams are pinged.
	WriteTimeout, PingInterval time.Duration
	// Src is where ?src= objects may come from; the zero Policy turns
	// ?src= off.
	Src egress.Policy
	// Stores is where the ObjectStores runs read from may be: each store is
	// dialled to its own endpoint's host only, within the policy's networks.
	Stores egress.Policy
	// StoreSecrets reads a namespace's store keys; nil refuses runs from
	// stores that are not anonymous.
	StoreSecrets StoreSecrets
	// ObjectStores reads a namespace's ObjectStores for listings of their objects; nil answers
	// them 501.
	ObjectStores ObjectStoreSpecs

	Resolver Resolver
	// RequireTransformerAuth makes the agent probe each transformer pod before its first object
	// (PathAuthProbe, without the credential) and refuse, with 503, one that answers below 400.
	RequireTransformerAuth bool
	// MinFreeBytes is the free space of the data root an object API PUT
	// never takes (507 past it).
	MinFreeBytes int64
	// NamespaceQuota bounds each namespace's bytes on the node; 0 is no
	// bound. NamespaceQuotaOf, when set, overrides it per namespace (the
	// Namespace's QuotaAnnotation).
	NamespaceQuota   int64
	NamespaceQuotaOf func(ns string) (int64, bool)
	// Peers are the ready agents the object API spreads objects over; nil
	// keeps every object on this node.
	Peers Peers
	// PeerTokenFile is the agent's own data path token, sent to peers;
	// PeerServiceAccount is the user whose tokens forwarded requests must
	// carry.
	PeerTokenFile, PeerServiceAccount string
	Log                               *slog.Logger
}

// DefaultOptions returns the options of a standard agent; Node, DataRoot,
// AdvertiseURL and Resolver are left to the caller.
func DefaultOptions() Options {
	return Options{
		TransformerDataRoot: wire.DataRoot,
		MaxObjectSize:       5 << 30, WSConns: 4,
		MaxOfflineRuns: 4, MaxOfflineWorkers: 64, MaxLargeStorePuts: 8, MaxStreams: 256, MaxInlineRequests: 256,
		StreamIdleTimeout: 2 * time.Minute, WriteTimeout: 30 * time.Second, PingInterval: 30 * time.Second,
		StreamReauthorize: time.Minute, // the reviewer's AllowTTL: a re-check sooner would only read its cache

		MinFreeBytes:  1 << 30,
		PeerTokenFile: wire.TokenFile, PeerServiceAccount: "system:serviceaccount:" + wire.AgentNamespace + ":node-agent",
		Log: slog.Default(),
	}
}

// Agent serves the data path API of one node.
type Agent struct {
	opts Options
	// root is the node's data directory (package dataroot).
	root     *os.Root
	resolver Resolver
	log      *slog.Logger
	// src fetches ?src= objects within opts.Src; transformers carries
	// objects to transformers. Neither follows redirects.
	src, transformers *http.Client
	ws                wsPools
	inflight          inflight
	metrics           *metrics
	panics            *panics.Reporter
	stats             recorder
	runs              *noderun.Runs
	limits            nodeLimits
	// size bounds every object (--max-object-size).
	size        sizeLimit
	promHandler http.Handler
	// objects is the object API's store; peers carries its requests to
	// other nodes' agents, as this agent (peerToken), and located remembers
	// where objects were found.
	objects   *objectStore
	peers     *http.Client
	peerToken tokenFile
	located   locations
	// storeLists holds a slot per listing of an ObjectStore under way (maxStoreLists).
	storeLists chan struct{}
}

var _ http.Handler = (*Agent)(nil)

// New returns an Agent; it fails when the data root cannot be opened.
func New(opts Options) (*Agent, error) {
	if opts.Resolver == nil {
		return nil, errors.New("agent: no resolver")
	}
	if opts.Access == nil {
		return nil, errors.New("agent: no authorizer: every caller must be authenticated and authorized")
	}
	if opts.WSConns < 1 {
		return nil, fmt.Errorf("agent: %d ws connections per transformer", opts.WSConns)
	}
	for name, v := range map[string]int{"offline runs": opts.MaxOfflineRuns, "offline workers": opts.MaxOfflineWorkers, "large store puts": opts.MaxLargeStorePuts, "streams": opts.MaxStreams, "inline requests": opts.MaxInlineRequests} {
		if v < 1 {
			return nil, fmt.Errorf("agent: a limit of %d %s", v, name)
		}
	}
	if opts.StreamIdleTimeout <= 0 || opts.WriteTimeout <= 0 || opts.PingInterval <= 0 {
		return nil, fmt.Errorf("agent: stream idle timeout %s, write timeout %s and ping interval %s must be positive",
			opts.StreamIdleTimeout, opts.WriteTimeout, opts.PingInterval)
	}
	root, err := dataroot.Open(opts.DataRoot)
	if err != nil {
		return nil, err
	}
	opts.AdvertiseURL = strings.TrimSuffix(opts.AdvertiseURL, "/")
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	a := &Agent{
		opts:     opts,
		root:     root,
		resolver: opts.Resolver,
		log:      opts.Log,
		src:      opts.Src.Client(srcHeaderTimeout),
		transformers: &http.Client{
			Transport:     newTransformerTransport(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		metrics: newMetrics(),
		stats:   recorder{node: opts.Node},
		limits:  newNodeLimits(opts),
		size:    newSizeLimit(opts.MaxObjectSize, opts.Node),

		storeLists: make(chan struct{}, maxStoreLists),
	}
	a.stats.forget = a.metrics.forget
	if opts.RequireTransformerAuth {
		a.resolver = &probingResolver{next: opts.Resolver, probe: a.probeTransformer}
	}
	a.objects = &objectStore{root: root, node: opts.Node, bounds: storeBounds{
		node: opts.Node, size: a.size, minFree: opts.MinFreeBytes,
		quota: opts.NamespaceQuota, quotaOf: opts.NamespaceQuotaOf, freeBytes: statfsFree(root.Name()),
	}}
	a.objects.bounds.usage.root = a.objects.namespace
	// Before the first PUT, whose temporary file the sweep could take for a
	// crashed one. One left behind is hidden from every request, so a sweep
	// that fails costs space, not correctness: the agent starts anyway.
	if err := a.objects.sweepTemps(); err != nil {
		a.log.Warn("the temporary files of interrupted object PUTs were not all removed", "dataRoot", opts.DataRoot, "error", err)
	}
	a.peers = &http.Client{
		Transport: &http.Transport{
			MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second, DisableCompression: true,
			MaxResponseHeaderBytes: maxAnswerHeaderBytes,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	a.peerToken.path = opts.PeerTokenFile
	a.located.max = maxLocations
	a.inflight.writeTimeout = opts.WriteTimeout
	a.panics = &panics.Reporter{Log: a.log, Count: a.metrics.panics}
	a.runs = noderun.New(noderun.Config{
		Node: opts.Node, Root: root, Transformers: runTransformers{a}, Results: a.objects, Stores: runStores{a},
		MaxRuns: opts.MaxOfflineRuns, MaxWorkers: opts.MaxOfflineWorkers, Panics: a.panics, Log: a.log,
	})
	a.ws = wsPools{size: opts.WSConns, writeTimeout: opts.WriteTimeout, panics: a.panics}
	a.promHandler = promhttp.HandlerFor(a.metrics.registry, promhttp.HandlerOpts{})
	return a, nil
}

// maxLocations bounds the objects whose node an agent remembers: about 100
// bytes each.
const maxLocations = 1 << 16

// srcHeaderTimeout bounds the wait for a ?src= source's answer; the object's
// timeout bounds the whole fetch.
const srcHeaderTimeout = 30 * time.Second

// maxAnswerHeaderBytes bounds the headers of each answer from a
// transformer (hpush, hpull and io alike) or a peer agent. net/http's
// default is 10 MiB per answer, held in memory while it is parsed: a
// transformer is a tenant's image, and one answering with megabytes of
// headers on each of the agent's concurrent requests would take the node's
// agent past its memory limit. Real answers carry a few hundred bytes of
// headers. (ws transformers' handshakes have their own bound, in package
// ws.)
const maxAnswerHeaderBytes = 64 << 10

// newTransformerTransport carries objects to transformers. A request with
// a body of up to wholeBodySize, or none (hpull's GETs), round-trips on the
// goroutine of its object, in one write (package h1client); larger bodies
// go on newTransport, which streams them in full duplex.
func newTransformerTransport() http.RoundTripper {
	return &h1client.Transport{
		Fallback: newTransport(), Dial: transformerDialer.DialContext,
		MaxBody: wholeBodySize, MaxHeaderBytes: maxAnswerHeaderBytes,
		MaxIdlePerHost: 256, IdleTimeout: 90 * time.Second,
	}
}

// newTransport is tuned for many concurrent objects to a few node-local
// hosts: plenty of idle connections per host, large buffers for large
// objects, no compression (objects are opaque) and no proxy (the traffic
// stays on the node). Answers' headers are bounded (maxAnswerHeaderBytes).
func newTransport() *http.Transport {
	return &http.Transport{
		DialContext:            dialTransformer,
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		DisableCompression:     true,
		WriteBufferSize:        bufpool.ObjectSize,
		ReadBufferSize:         bufpool.ObjectSize,
		MaxResponseHeaderBytes: maxAnswerHeaderBytes,
	}
}

var transformerDialer = &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}

// dialTransformer dials a connection that sends request bodies through
// large pooled buffers (see transformerConn).
func dialTransformer(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := transformerDialer.DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		return transformerConn{tc}, err
	}
	return c, err
}

// transformerConn is a TCP connection whose ReadFrom copies through a
// pooled buffer of bufpool.StreamSize. net/http sends a streamed request
// body with the connection's ReadFrom, which on a bare *net.TCPConn
// allocates a 32 KiB buffer per request and costs a read from the client
// and a write to the transformer per 32 KiB.
type transformerConn struct{ *net.TCPConn }

func (c transformerConn) ReadFrom(r io.Reader) (int64, error) {
	buf := bufpool.Streams.Get()
	defer bufpool.Streams.Put(buf)
	// Only Write: io.CopyBuffer would otherwise call ReadFrom again.
	return io.CopyBuffer(struct{ io.Writer }{c.TCPConn}, r, *buf)
}

// ServeHTTP routes the agent's API. It routes by prefix rather than with a
// ServeMux, which would redirect paths with ".." segments to cleaned ones
// instead of letting the agent refuse them.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch path := r.URL.Path; {
	case strings.HasPrefix(path, PathTransform):
		a.serveTransform(w, r)
	case strings.HasPrefix(path, PathStream):
		a.serveStream(w, r)
	case strings.HasPrefix(path, wire.PathObjects):
		a.serveObjects(w, r)
	case strings.HasPrefix(path, wire.PathStores):
		a.serveStoreList(w, r)
	case strings.HasPrefix(path, wire.NodeRunsPath):
		a.serveNodeRuns(w, r)
	case strings.HasPrefix(path, wire.PathInflight):
		// A transformer's fetch carries no token: the unguessable, one-time
		// id is its capability (see inflight).
		a.inflight.serve(w, r)
	case path == wire.StatsPath:
		a.serveNonResource(w, r, http.HandlerFunc(a.stats.serve))
	case path == PathMetrics:
		a.serveNonResource(w, r, a.promHandler)
	case path == PathHealth:
		_, _ = io.WriteString(w, "ok") // a client that went away has nothing to be told
	default:
		a.fail(w, transformPath{}, status.NotFound(fmt.Errorf("no such path %s", path)))
	}
}

// Stats returns what the agent recorded so far, as GET /v1/stats answers it.
func (a *Agent) Stats() wire.StatsReport { return a.stats.report() }

// PrepareFQN makes the node's directory of t's namespace, owned by the
// agent, when t is an fqn Transform: its transformer pods mount that
// directory, and the kubelet waits for it rather than make it as root, which
// would leave the agent unable to store the namespace's objects.
func (a *Agent) PrepareFQN(t *etlv1alpha1.Transform) error {
	if t.Spec.Argument != etlv1alpha1.ArgFQN {
		return nil
	}
	if err := a.objects.prepare(t.Namespace); err != nil {
		return fmt.Errorf("data directory of namespace %s for fqn Transform %s: %w", t.Namespace, t.Name, err)
	}
	return nil
}

// Close stops the runs, waiting until their workers let go of the data
// root (their objects in flight are redone when each run resumes), and
// closes the connections to transformers.
func (a *Agent) Close() {
	a.runs.Close()
	a.ws.close()
	a.transformers.CloseIdleConnections()
	a.src.CloseIdleConnections()
	a.peers.CloseIdleConnections()
	a.root.Close()
}
