// Package runtimetest runs a transformer as a process, the way its container would, for the
// tests of the runtimes' images and commands.
package runtimetest

import (
	"bytes"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/runtimes/proc"
)

// Serve starts cmd with wire.EnvPort added to its environment, set to a free loopback port and returns the transformer's
// URL once GET /health answers 200. The process group is killed when the test ends; its output
// is logged if the test failed.
func Serve(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	port := FreePort(t)
	if cmd.Env == nil {
		cmd.Env = os.Environ() // what a nil Env would have meant
	}
	cmd.Env = append(cmd.Env, wire.EnvPort+"="+port)
	proc.OwnGroup(cmd)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		proc.KillGroup(cmd.Process)
		werr := <-exited // killed, as a rule; otherwise it tells why the transformer ended early
		if t.Failed() {
			t.Logf("%s (%v) output:\n%s", cmd.Path, werr, out.String())
		}
	})
	url := "http://127.0.0.1:" + port
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url + wire.PathHealth)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited before it was healthy: %v", cmd.Path, err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not become healthy in 30s", cmd.Path)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}
