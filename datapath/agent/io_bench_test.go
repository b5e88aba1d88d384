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

// ioBinaries builds, each once and when first asked for, the programs the io
// rows run as a pod does: cmd/io-shim, a process of its own that the agent
// reaches over hpush, and the load generator, whose cat-framed is the
// persistent row's command.
type ioBinaries struct{ shim, loadgen func() string }

func ioShimBinaries(b *testing.B) ioBinaries {
	dir := b.TempDir()
	build := func(name, pkg string) func() string {
		return sync.OnceValue(func() string {
			bin := filepath.Join(dir, name)
			out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
			if err != nil {
				b.Fatalf("building %s: %v\n%s", pkg, err, out)
			}
			return bin
		})
	}
	return ioBinaries{
		shim:    build("io-shim", "github.com/mlkube/mlkube/cmd/io-shim"),
		loadgen: build("loadgen", "github.com/mlkube/mlkube/e2e/images/loadgen"),
	}
}

// startIOShim serves command through the shim at bin, running up to
// concurrency commands at once, each once per object or, if persistent, once
// per worker, and returns its URL once it is healthy.
func startIOShim(b *testing.B, bin string, concurrency int, persistent bool, command []string) string {
	port := freePort(b)
	shim := wire.IOShimCommand(persistent, command...)
	args := append([]string{"--concurrency", strconv.Itoa(concurrency)}, shim[1:]...)
	cmd := exec.Command(bin, args...)
	// The shim answers only the agent's credential, which the env sends as benchToken.
	tokenFile := filepath.Join(b.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(benchToken), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd.Env = append(os.Environ(), wire.EnvPort+"="+strconv.Itoa(port), wire.EnvTokenFile+"="+tokenFile)
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
