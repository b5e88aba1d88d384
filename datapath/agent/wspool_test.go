package agent

import (
	"context"
	"net/http"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// TestWSPoolsForgetGoneTransformers: when a transformer goes (its pod is
// replaced, with a new address), its pool is dropped as soon as another
// transformer is seen, instead of piling up for the agent's lifetime.
func TestWSPoolsForgetGoneTransformers(t *testing.T) {
	e := newEnv(t)
	old := e.addTransform("old", etlv1alpha1.CommWS, "", echo)
	if a := e.put("old", "o", wire.Query{}, []byte("x")); a.status != http.StatusOK {
		t.Fatalf("through old: %d %s", a.status, a.body)
	}
	p := e.agent.ws.pool(e.poolKey(old.URL))
	p.mu.Lock()
	conn := p.conns[0]
	p.mu.Unlock()
	old.Handler.Shutdown(context.Background()) // ends its ws sessions
	<-conn.closed

	e.addTransform("new", etlv1alpha1.CommWS, "", echo)
	if a := e.put("new", "o", wire.Query{}, []byte("x")); a.status != http.StatusOK {
		t.Fatalf("through new: %d %s", a.status, a.body)
	}
	if _, ok := e.agent.ws.pools.Load(e.poolKey(old.URL)); ok {
		t.Error("the gone transformer's pool is still kept")
	}
	if !p.gone {
		t.Error("the dropped pool is not marked gone for callers still holding it")
	}
	if c, err := e.agent.ws.get(context.Background(), e.targetAt(old.URL), nil); err == nil {
		c.fail(errConnClosed)
		t.Error("a connection to the gone transformer was dialled")
	}
}
