package agent

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func boom() { panic("boom in a test") }

// TestPanicsMetric: the agent exposes the count as
// mlkube_datapath_panics_total.
func TestPanicsMetric(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Log = slog.New(slog.DiscardHandler) })
	_ = e.agent.panics.Call("test", boom)
	a := e.do(http.MethodGet, e.url+PathMetrics, nil)
	if want := `mlkube_datapath_panics_total{goroutine="test"} 1`; !strings.Contains(string(a.body), want) {
		t.Errorf("GET %s lacks %s", PathMetrics, want)
	}
}
