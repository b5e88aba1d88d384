package replicas

import (
	"bufio"
	"fmt"
	"io"
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
)

// The webhook configurations as controller-gen writes them, before kustomize prefixes them.
const (
	mutatingConfig   = "mutating-webhook-configuration"
	validatingConfig = "validating-webhook-configuration"
)

// replica is one manager process, started with the flags of the Deployment's container and its
// own probe, metrics and webhook ports and certificate directory.
type replica struct {
	name                                     string
	probeAddr, metricsAddr, webhookAddr, log string
	cmd                                      *exec.Cmd
	exited                                   chan struct{}
}

func startReplica(t *testing.T, name string) *replica {
	t.Helper()
	r := &replica{name: name, probeAddr: freeAddr(t), metricsAddr: freeAddr(t), webhookAddr: freeAddr(t),
		log: filepath.Join(t.TempDir(), name+".log"), exited: make(chan struct{})}
	_, webhookPort, _ := net.SplitHostPort(r.webhookAddr)
	r.cmd = exec.Command(managerBin,
		"--leader-elect",
		"--health-probe-bind-address="+r.probeAddr,
		// Plain HTTP: the test reads the leader election gauge without a token.
		"--metrics-bind-address="+r.metricsAddr, "--metrics-secure=false",
		"--webhook-port="+webhookPort,
		"--cert-dir="+t.TempDir(),
		"--mutating-webhook-configuration="+mutatingConfig,
		"--validating-webhook-configuration="+validatingConfig,
		"--extra-cert-dns-names=localhost",
		"--datapath-token-file=",
	)
	r.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "POD_NAMESPACE="+opts.Namespace)
	out, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd.Stdout, r.cmd.Stderr = out, out
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		out.Close()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(r.log)
			t.Logf("output of replica %s:\n%s", r.name, b)
		}
	})
	return r
}

// stop sends SIGTERM, as the kubelet does to a deleted pod, and waits for the process to exit.
func (r *replica) stop(t *testing.T) {
	t.Helper()
	select {
	case <-r.exited:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(30 * time.Second): // the manager's graceful shutdown timeout
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Errorf("replica %s did not exit within 30s of SIGTERM", r.name)
	}
}

func (r *replica) running() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// ready is the kubelet's readiness probe.
func (r *replica) ready() bool {
	resp, err := http.Get("http://" + r.probeAddr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leads reads controller-runtime's leader election gauge, which is 1 only while this process
// holds the lease (a replica that never led has no sample).
func (r *replica) leads() (bool, error) {
	resp, err := http.Get("http://" + r.metricsAddr + "/metrics")
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	want := fmt.Sprintf("leader_election_master_status{name=%q} 1", opts.LeaderElectionID)
	s := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if strings.TrimSpace(s.Text()) == want {
			return true, nil
		}
	}
	return false, s.Err()
}

// freeAddr is a localhost address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
