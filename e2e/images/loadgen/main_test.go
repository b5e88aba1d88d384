package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mlkube/mlkube/internal/loadgen"
)

// TestDriveThroughTheBareParts runs a plan of every method against the bare server, directly and
// through the relay command, and reads back one checked result a row.
func TestDriveThroughTheBareParts(t *testing.T) {
	served := t.TempDir()
	if err := os.WriteFile(filepath.Join(served, "obj"), loadgen.Payload(5000), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := bareServer("4096,70000", served)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go loadgen.Relay(ln, strings.TrimPrefix(srv.URL, "http://"))
	defer ln.Close()
	relayed := "http://" + ln.Addr().String()
	d := 50 * time.Millisecond
	plan, _ := json.Marshal(loadgen.Plan{Rounds: 1, Rows: []loadgen.Row{
		{Name: "bare", Method: http.MethodPut, URL: srv.URL + "/echo", Size: 4096, InFlight: 2, Duration: d},
		{Name: "chain", Method: http.MethodPut, URL: relayed + "/echo", Size: 4096, InFlight: 2, Duration: d},
		{Name: "bare-get", Method: http.MethodGet, URL: srv.URL + "/file/70000", Size: 70000, InFlight: 1, Duration: d},
		{Name: "dir-get", Method: http.MethodGet, URL: srv.URL + "/dir/obj", Size: 5000, InFlight: 1, Duration: d},
		{Name: "bare-ws", Method: "STREAM", URL: "ws" + strings.TrimPrefix(relayed, "http") + "/ws", Size: 4096, InFlight: 16, Duration: d},
	}})
	var out bytes.Buffer
	if err := run([]string{"drive", "-plan", string(plan)}, &out); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for sc := bufio.NewScanner(&out); sc.Scan(); {
		var r loadgen.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Objects == 0 || r.Error != "" {
			t.Errorf("result %s: %v", sc.Text(), err)
		}
		rows = append(rows, r.Row)
	}
	if strings.Join(rows, ",") != "bare,chain,bare-get,dir-get,bare-ws" {
		t.Errorf("results for %v", rows)
	}
}

func TestBadArguments(t *testing.T) {
	for args, want := range map[string]string{
		"":                         "usage",
		"fly":                      "unknown command",
		"relay":                    "-backend",
		"drive -plan {":            "not a loadgen.Plan",
		"serve -files 1,x":         `"x" is not a size`,
		`drive -plan {"rounds":1}`: "no rows",
	} {
		var fields []string
		if args != "" {
			fields = strings.Fields(args)
		}
		if err := run(fields, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loadgen %s: %v, want %q", args, err, want)
		}
	}
}
