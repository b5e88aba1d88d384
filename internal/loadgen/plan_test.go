package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPlanRunsEveryRowEveryRound writes the plan's file, GETs it back, PUTs through the echo and
// streams over the WebSocket echo, and reports every row of every round with objects checked.
func TestPlanRunsEveryRowEveryRound(t *testing.T) {
	dir := t.TempDir()
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /echo", Echo)
	mux.HandleFunc("/ws", WSEcho)
	var asked atomic.Int32
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		// Not ready at first, as a Service kube-proxy has no rules for yet.
		if asked.Add(1) < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.Handle("GET /files/", http.StripPrefix("/files/", http.FileServer(http.Dir(dir))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("t0ken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Plan{
		TokenFile: token,
		Files:     map[string]int{filepath.Join(dir, "ns", "obj"): 70 << 10},
		Ready:     []string{srv.URL + "/ready"},
		Rounds:    2,
		Rows: []Row{
			{Name: "get", Method: http.MethodGet, URL: srv.URL + "/files/ns/obj", Size: 70 << 10, InFlight: 2, Duration: 50 * time.Millisecond},
			{Name: "put", Method: http.MethodPut, URL: srv.URL + "/echo", Size: 4 << 10, InFlight: 4, Auth: true, Duration: 50 * time.Millisecond},
			{Name: "ws", Method: "STREAM", URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", Size: 4 << 10, InFlight: 16, Duration: 50 * time.Millisecond},
		},
	}
	var got []string
	err := p.Execute(context.Background(), func(round int, r Result) {
		if r.Objects == 0 || r.Error != "" || r.Elapsed <= 0 {
			t.Errorf("round %d row %s: %+v", round, r.Row, r)
		}
		got = append(got, r.Row)
	})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() < 3 {
		t.Errorf("the rows started after %d readiness checks, before the URL answered 200", asked.Load())
	}
	if strings.Join(got, ",") != "get,put,ws,get,put,ws" {
		t.Errorf("rows reported %v, want every row of both rounds in order", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "ns")); !os.IsNotExist(err) {
		t.Errorf("the plan's file and its directory were left behind: %v", err)
	}

	// A server that answers something else fails the row, and the plan stops there.
	p.Rows[1].URL = srv.URL + "/files/ns/obj"
	var rows int
	err = p.Execute(context.Background(), func(int, Result) { rows++ })
	if err == nil || !strings.Contains(err.Error(), "row put") || rows != 2 {
		t.Errorf("a wrong answer: %v after %d rows; want the row named, after 2 rows", err, rows)
	}
}

func TestPlanWaitsForReadyOnlySoLong(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) }))
	defer srv.Close()
	if err := waitReady(context.Background(), srv.URL, 600*time.Millisecond); err == nil || !strings.Contains(err.Error(), "status 502") {
		t.Errorf("a URL that never answers 200: %v, want its last status", err)
	}
}

func TestPlanBounds(t *testing.T) {
	ok := Row{Name: "r", Method: http.MethodPut, Size: 1, InFlight: 1, Duration: time.Second}
	for field, mutate := range map[string]func(*Row){
		"method":   func(r *Row) { r.Method = "POST" },
		"inFlight": func(r *Row) { r.InFlight = MaxInFlight + 1 },
		"size":     func(r *Row) { r.Size = -1 },
		"duration": func(r *Row) { r.Duration = 0 },
	} {
		r := ok
		mutate(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s out of bounds: %v, want an error naming it", field, err)
		}
	}
	for name, p := range map[string]Plan{
		"rounds": {Rows: []Row{ok}, Rounds: 0},
		"rows":   {Rounds: 1},
	} {
		if err := p.Execute(context.Background(), func(int, Result) {}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("bad %s: %v, want an error naming it", name, err)
		}
	}
}
