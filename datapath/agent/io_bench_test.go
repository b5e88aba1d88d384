package agent

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/loadgen"
	"github.com/mlkube/mlkube/runtimes/proc"
)

// ioCommand is the io rows' command: its result is its object, so that
// every result can be checked.
var ioCommand = []string{"cat"}

// ioShimBinary returns a function that builds cmd/io-shim once, into a
// directory of b's, and returns its path: the io row runs the shim as a pod
// does, a process of its own that the agent reaches over hpush.
func ioShimBinary(b *testing.B) func() string {
	dir := b.TempDir()
	return sync.OnceValue(func() string {
		bin := filepath.Join(dir, "io-shim")
		out, err := exec.Command("go", "build", "-o", bin, "github.com/mlkube/mlkube/cmd/io-shim").CombinedOutput()
		if err != nil {
			b.Fatalf("building the io shim: %v\n%s", err, out)
		}
		return bin
	})
}

// startIOShim serves command through the shim at bin, running up to
// concurrency commands at once, and returns its URL once it is healthy.
func startIOShim(b *testing.B, bin string, concurrency int, command []string) string {
	port := freePort(b)
	args := append([]string{"--concurrency", strconv.Itoa(concurrency), "--"}, command...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), wire.EnvPort+"="+strconv.Itoa(port))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(url + wire.PathHealth)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("io shim not healthy at %s: %v", url, err)
		}
	}
}

// freePort is a loopback port nobody listens on, for a process that binds
// its own.
func freePort(b *testing.B) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// execClients makes clients for runObjects that run command once per
// object without mlkube, the object on its stdin, and check that its stdout
// is payload.
func execClients(payload []byte, command []string) func() func() error {
	return func() func() error {
		chk := loadgen.NewChecker(payload)
		return func() error {
			// Started as the shim starts every command.
			cmd := exec.CommandContext(context.Background(), command[0], command[1:]...)
			proc.KillGroupOnCancel(cmd)
			cmd.Stdin = bytes.NewReader(payload)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				return err
			}
			if err := cmd.Start(); err != nil {
				return err
			}
			cerr := chk.Check(stdout)
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("%s: %w", command[0], err)
			}
			return cerr
		}
	}
}
