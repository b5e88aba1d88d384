package transform

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/internal/agentclient"
)

// Collector pulls every node agent's statistics once per interval and keeps the latest, so the
// data path never writes Transform status per object and a reconcile never waits on the network.
// Transforms whose figures changed are sent on Changes, which the controller watches.
type Collector struct {
	client.Reader
	// Namespace and Selector find the agent pods; Port is their API port.
	Namespace string
	Selector  client.MatchingLabels
	Port      int
	Interval  time.Duration
	HTTP      *http.Client
	// Token, when set, authenticates every pull: agents admit only ServiceAccount tokens of the
	// data path's audience whose subject RBAC lets get /v1/stats.
	Token *agentclient.TokenFile

	changes chan event.GenericEvent
	mu      sync.RWMutex
	reports map[string]wire.StatsReport // by node
}

// NewCollector returns a Collector for the agents of the given namespace and labels.
func NewCollector(r client.Reader, namespace string, selector map[string]string, port int) *Collector {
	return &Collector{
		Reader: r, Namespace: namespace, Selector: selector, Port: port,
		Interval: 10 * time.Second,
		HTTP:     &http.Client{Timeout: 5 * time.Second},
		changes:  make(chan event.GenericEvent, 256),
		reports:  map[string]wire.StatsReport{},
	}
}

// Changes carries the Transforms whose statistics changed.
func (c *Collector) Changes() <-chan event.GenericEvent { return c.changes }

// Latest returns the most recent report of every node.
func (c *Collector) Latest() map[string]wire.StatsReport {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return maps.Clone(c.reports)
}

// Start implements manager.Runnable.
func (c *Collector) Start(ctx context.Context) error {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.collect(ctx)
		}
	}
}

// NeedLeaderElection: only the leader writes status, so only the leader pulls.
func (c *Collector) NeedLeaderElection() bool { return true }

func (c *Collector) collect(ctx context.Context) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(c.Namespace), c.Selector); err != nil {
		log.FromContext(ctx).Error(err, "listing node agents")
		return
	}
	running := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
		return p.Status.PodIP == "" || p.Status.Phase != corev1.PodRunning
	})
	if len(running) == 0 {
		return // nothing to pull; in particular no token to read
	}
	var token string
	if c.Token != nil {
		var err error
		if token, err = c.Token.Token(); err != nil {
			// Every agent would refuse the pull; say why once, keep the last figures.
			log.FromContext(ctx).Error(err, "cannot pull node agent statistics", "tokenFile", c.Token.Path)
			return
		}
	}
	fresh := map[string]wire.StatsReport{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range running {
		wg.Go(func() {
			r, err := c.fetch(ctx, p.Status.PodIP, token)
			if errors.Is(err, agentclient.ErrRefused) {
				// Not a passing network failure: the token or its RBAC binding is wrong.
				log.FromContext(ctx).Error(err, "pulling agent statistics", "pod", p.Name)
				return
			}
			if err != nil {
				log.FromContext(ctx).V(1).Info("pulling agent statistics", "pod", p.Name, "error", err)
				return
			}
			if r.Node == "" {
				r.Node = p.Spec.NodeName
			}
			mu.Lock()
			fresh[r.Node] = r
			mu.Unlock()
		})
	}
	wg.Wait()
	c.mu.Lock()
	old := c.reports
	c.reports = fresh
	c.mu.Unlock()
	for _, key := range changedTransforms(old, fresh) {
		ns, name, _ := strings.Cut(key, "/")
		t := &v1alpha1.Transform{}
		t.Namespace, t.Name = ns, name
		select {
		case c.changes <- event.GenericEvent{Object: t}:
		default: // the controller is behind; the next collection catches up
		}
	}
}

// fetch pulls one agent's report, presenting token unless it is empty.
func (c *Collector) fetch(ctx context.Context, ip, token string) (wire.StatsReport, error) {
	var r wire.StatsReport
	err := agentclient.Do(ctx, c.HTTP, http.MethodGet, agentclient.URL(ip, c.Port, wire.StatsPath), token, nil, &r)
	return r, err
}

// changedTransforms lists the Transforms whose figures differ between two collections.
func changedTransforms(old, fresh map[string]wire.StatsReport) []string {
	keys := map[string]bool{}
	for _, reports := range []map[string]wire.StatsReport{old, fresh} {
		for _, r := range reports {
			for k := range r.Transforms {
				keys[k] = true
			}
		}
	}
	var changed []string
	for k := range keys {
		for node := range mergedNodes(old, fresh) {
			if !equality.Semantic.DeepEqual(old[node].Transforms[k], fresh[node].Transforms[k]) {
				changed = append(changed, k)
				break
			}
		}
	}
	slices.Sort(changed)
	return changed
}

func mergedNodes(a, b map[string]wire.StatsReport) map[string]bool {
	nodes := map[string]bool{}
	for n := range a {
		nodes[n] = true
	}
	for n := range b {
		nodes[n] = true
	}
	return nodes
}
