package agent

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log destination goroutines may write to.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func boom() { panic("boom in a test") }

// TestPanicsAreReported: a function that panics, run by call or in a
// goroutine by goSafe, is logged with its stack and counted, and the process
// (this test) goes on.
func TestPanicsAreReported(t *testing.T) {
	var log syncBuffer
	m := newMetrics()
	p := &panics{log: slog.New(slog.NewTextHandler(&log, nil)), count: m.panics}

	if err := p.call("test", boom); !errors.Is(err, errInternal) {
		t.Errorf("call of a panicking function = %v, want errInternal", err)
	}
	done := make(chan struct{})
	p.goSafe("test", func() {
		defer close(done)
		boom()
	})
	<-done
	for panicsCounted(t, m, "test") < 2 {
		// goSafe reports after f's defers have run.
		select {
		case <-t.Context().Done():
			t.Fatal("the goroutine's panic was not counted")
		case <-time.After(time.Millisecond):
		}
	}
	for _, want := range []string{"boom in a test", "goroutine=test", "crash_test.go", "agent.boom"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if err := p.call("test", func() {}); err != nil {
		t.Errorf("call of a function that returns = %v", err)
	}
}

// panicsCounted returns mlkube_datapath_panics_total of goroutine what.
func panicsCounted(t *testing.T, m *metrics, what string) float64 {
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mlkube_datapath_panics_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			if l := s.GetLabel(); len(l) == 1 && l[0].GetValue() == what {
				return s.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPanicsMetric: the agent exposes the count as
// mlkube_datapath_panics_total.
func TestPanicsMetric(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.Log = slog.New(slog.DiscardHandler) })
	_ = e.agent.panics.call("test", boom)
	a := e.do(http.MethodGet, e.url+PathMetrics, nil)
	if want := `mlkube_datapath_panics_total{goroutine="test"} 1`; !strings.Contains(string(a.body), want) {
		t.Errorf("GET %s lacks %s", PathMetrics, want)
	}
}

// TestEveryGoroutineRecovers: the package starts goroutines only through
// goSafe, so that a panic in one is reported instead of ending the process.
func TestEveryGoroutineRecovers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "crash.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement; start goroutines with panics.goSafe", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if n.Sel.Name == "Go" {
					t.Errorf("%s: %s.Go starts a goroutine; use panics.goSafe", fset.Position(n.Pos()), n.X)
				}
			}
			return true
		})
	}
}
