// Package runtimetest runs a transformer as a process, the way its container would, for the
// tests of the runtimes' images and commands.
package runtimetest

import (
	"bytes"
	"crypto/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
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

// Token gives cmd a random node agent credential, as the controller's Secret volume does: it
// writes it to hostPath and points wire.EnvTokenFile at envPath, the same file as the command
// sees it (under its chroot, if any). It returns the token, and a client that sends it.
func Token(t *testing.T, cmd *exec.Cmd, hostPath, envPath string) (string, *http.Client) {
	t.Helper()
	token := rand.Text()
	if err := os.WriteFile(hostPath, []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, wire.EnvTokenFile+"="+envPath)
	return token, &http.Client{Transport: transformertest.WithToken(nil, token)}
}

// MainRefusesWithoutCredential runs main, a runtime's command line that serves through
// transformer.Main, in this process on a free port with a token file, as the controller's pod
// would. Once GET /health answers 200 without a credential, it sends an object without one and
// checks the answer is 401; then it stops main with SIGTERM, as the kubelet would. The caller
// checks that the object reached nothing (no worker ran, no command was spawned).
func MainRefusesWithoutCredential(t *testing.T, main func() int) {
	t.Helper()
	port := FreePort(t)
	t.Setenv(wire.EnvPort, port)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(rand.Text()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(wire.EnvTokenFile, tokenFile)
	exited := make(chan int, 1)
	go func() { exited <- main() }()
	url := "http://127.0.0.1:" + port
	for {
		resp, err := http.Get(url + wire.PathHealth)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case code := <-exited:
			t.Fatalf("main exited with status %d before it served", code)
		case <-time.After(20 * time.Millisecond): // polling interval, not synchronisation
		}
	}
	resp, err := http.Post(url+"/o", "application/octet-stream", nil) // POST: refused before routing too
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST without the credential: %d, want 401", resp.StatusCode)
		}
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, url+"/o", strings.NewReader("object"))
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("PUT without the credential: %d, want 401", resp.StatusCode)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := <-exited; code != 0 {
		t.Errorf("main exited with status %d after SIGTERM, want 0", code)
	}
}
