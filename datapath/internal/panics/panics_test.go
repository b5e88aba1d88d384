package panics

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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

// TestPanicsAreReported: a function that panics, run by Call or in a
// goroutine by GoSafe, is logged with its stack and counted, and the process
// (this test) goes on.
func TestPanicsAreReported(t *testing.T) {
	var log syncBuffer
	count := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "panics_total"}, []string{"goroutine"})
	p := &Reporter{Log: slog.New(slog.NewTextHandler(&log, nil)), Count: count}

	if err := p.Call("test", boom); !errors.Is(err, ErrInternal) {
		t.Errorf("Call of a panicking function = %v, want ErrInternal", err)
	}
	done := make(chan struct{})
	p.GoSafe("test", func() {
		defer close(done)
		boom()
	})
	<-done
	for panicsCounted(t, count, "test") < 2 {
		// GoSafe reports after f's defers have run.
		select {
		case <-t.Context().Done():
			t.Fatal("the goroutine's panic was not counted")
		case <-time.After(time.Millisecond):
		}
	}
	for _, want := range []string{"boom in a test", "goroutine=test", "panics_test.go", "panics.boom"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if err := p.Call("test", func() {}); err != nil {
		t.Errorf("Call of a function that returns = %v", err)
	}
}

// panicsCounted returns the count of goroutine what.
func panicsCounted(t *testing.T, count *prometheus.CounterVec, what string) float64 {
	var m dto.Metric
	if err := count.WithLabelValues(what).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestEveryGoroutineRecovers: the data path (the agent, its run executor and
// what they share) starts goroutines only through GoSafe, so that a panic in
// one is reported instead of ending the process.
func TestEveryGoroutineRecovers(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("../..", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") ||
			name == filepath.Join("..", "..", "internal", "panics", "panics.go") {
			return err
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement; start goroutines with panics.GoSafe", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if n.Sel.Name == "Go" {
					t.Errorf("%s: %s.Go starts a goroutine; use panics.GoSafe", fset.Position(n.Pos()), n.X)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("checked %d files of the data path; is the walk rooted at datapath/?", checked)
	}
}
