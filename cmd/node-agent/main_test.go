package main

import (
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/datapath/agent"
	"github.com/mlkube/mlkube/internal/egress"
)

func noEnv(string) string { return "" }

// TestSrcFlags: ?src= is off unless the operator names hosts, and the three
// flags make up the agent's policy.
func TestSrcFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want egress.Policy
	}{
		"default is off": {},
		"hosts and networks": {
			args: []string{"--src-allowed-hosts=data.example.com,*.store.example.org", "--src-denied-cidrs=10.96.0.0/12", "--src-allowed-cidrs=10.96.5.0/24"},
			want: egress.Policy{
				Hosts:   []string{"data.example.com", "*.store.example.org"},
				Denied:  []netip.Prefix{netip.MustParsePrefix("10.96.0.0/12")},
				Allowed: []netip.Prefix{netip.MustParsePrefix("10.96.5.0/24")},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			_, opts, err := parseFlags(tc.args, noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, opts.Src, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("policy (-want +got):\n%s", diff)
			}
		})
	}
	if _, _, err := parseFlags([]string{"--src-denied-cidrs=nope"}, noEnv); err == nil || !strings.Contains(err.Error(), "--src-denied-cidrs") {
		t.Errorf("a bad network: %v, want an error naming the flag", err)
	}
}

// TestReviewRateFlags: the reviews the agent sends the API server are bounded
// by default, the flags set the bound, and none may turn it off.
func TestReviewRateFlags(t *testing.T) {
	srv, _, err := parseFlags(nil, noEnv)
	if err != nil || srv.review.QPS != 50 || srv.review.Burst != 100 {
		t.Errorf("defaults: %g a second, bursts of %d, %v; want 50 and 100", srv.review.QPS, srv.review.Burst, err)
	}
	srv, _, err = parseFlags([]string{"--review-qps=5", "--review-burst=20"}, noEnv)
	if err != nil || srv.review.QPS != 5 || srv.review.Burst != 20 {
		t.Errorf("--review-qps=5 --review-burst=20: %g, %d, %v", srv.review.QPS, srv.review.Burst, err)
	}
	for _, arg := range []string{"--review-qps=0", "--review-qps=-1", "--review-burst=0"} {
		if _, _, err := parseFlags([]string{arg}, noEnv); err == nil || !strings.Contains(err.Error(), "--review-qps") {
			t.Errorf("%s: %v, want an error naming the flags", arg, err)
		}
	}
}

// TestServerBoundsHeaders: headers over maxHeaderBytes are refused with 431
// before the agent sees the request; the usual ones pass.
func TestServerBoundsHeaders(t *testing.T) {
	srv := newServer("", http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if srv.ReadHeaderTimeout <= 0 {
		t.Error("no ReadHeaderTimeout: a client could hold a connection by sending its headers slowly")
	}
	if srv.IdleTimeout <= 0 {
		t.Error("no IdleTimeout: a client could hold idle connections for ever")
	}
	if srv.WriteTimeout != 0 || srv.ReadTimeout != 0 {
		t.Errorf("WriteTimeout %s, ReadTimeout %s: either would cut long objects; streams bound each write instead", srv.WriteTimeout, srv.ReadTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	for size, want := range map[int]int{8 << 10: http.StatusOK, 2 * maxHeaderBytes: http.StatusRequestHeaderFieldsTooLarge} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/", nil)
		req.Header.Set("X-Big", strings.Repeat("a", size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%d bytes of headers: %v", size, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%d bytes of headers: status %d, want %d", size, resp.StatusCode, want)
		}
	}
}

// TestLimitFlags: the node-wide caps default to the agent's and are set by
// their flags.
func TestLimitFlags(t *testing.T) {
	_, opts, err := parseFlags(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	def := agent.DefaultOptions()
	if opts.MaxOfflineRuns != def.MaxOfflineRuns || opts.MaxOfflineWorkers != def.MaxOfflineWorkers || opts.MaxStreams != def.MaxStreams ||
		opts.MaxInlineRequests != def.MaxInlineRequests {
		t.Errorf("defaults %+v, want the agent's %+v", opts, def)
	}
	_, opts, err = parseFlags([]string{"--max-offline-runs=2", "--max-offline-workers=9", "--max-streams=7", "--max-inline-requests=5"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{opts.MaxOfflineRuns, opts.MaxOfflineWorkers, opts.MaxStreams, opts.MaxInlineRequests}; !cmp.Equal(got, []int{2, 9, 7, 5}) {
		t.Errorf("limits %v, want [2 9 7 5]", got)
	}
}

// TestDeadlineFlags: the stream deadlines default to the agent's and are
// set by their flags.
func TestDeadlineFlags(t *testing.T) {
	_, opts, err := parseFlags(nil, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	def := agent.DefaultOptions()
	if opts.StreamIdleTimeout != def.StreamIdleTimeout || opts.WriteTimeout != def.WriteTimeout || opts.PingInterval != def.PingInterval {
		t.Errorf("defaults %+v, want the agent's %+v", opts, def)
	}
	_, opts, err = parseFlags([]string{"--stream-idle-timeout=1m", "--write-timeout=5s", "--ping-interval=10s"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := []time.Duration{opts.StreamIdleTimeout, opts.WriteTimeout, opts.PingInterval}, []time.Duration{time.Minute, 5 * time.Second, 10 * time.Second}; !cmp.Equal(got, want) {
		t.Errorf("deadlines %v, want %v", got, want)
	}
}

// TestProfilesStayOnLoopback: profiles answer without a token, so only a loopback address,
// reached by an authorized port-forward, is taken.
func TestProfilesStayOnLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "[::1]:6060"} {
		if srv, _, err := parseFlags([]string{"--pprof-listen=" + addr}, noEnv); err != nil || srv.pprof != addr {
			t.Errorf("--pprof-listen=%s: %v, %q", addr, err, srv.pprof)
		}
	}
	for _, addr := range []string{":6060", "0.0.0.0:6060", "10.0.0.1:6060", "localhost:6060", "127.0.0.1"} {
		if _, _, err := parseFlags([]string{"--pprof-listen=" + addr}, noEnv); err == nil || !strings.Contains(err.Error(), "--pprof-listen") {
			t.Errorf("--pprof-listen=%s: %v, want it refused, naming the flag", addr, err)
		}
	}
	if srv, _, err := parseFlags(nil, noEnv); err != nil || srv.pprof != "" {
		t.Errorf("by default profiles are served at %q (%v), want off", srv.pprof, err)
	}
}

// TestVersionFlag builds the agent as the Makefile does, stamping a version with -ldflags -X, and
// runs --version: the path the Makefile stamps is the one the binary reads.
func TestVersionFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agent")
	}
	bin := filepath.Join(t.TempDir(), "node-agent")
	build := exec.Command("go", "build", "-trimpath", "-o", bin,
		"-ldflags", "-X github.com/mlkube/mlkube/internal/version.Version=v9.8.7-test", ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("node-agent --version: %v\n%s", err, out)
	}
	if want := "node-agent v9.8.7-test (go"; !strings.HasPrefix(string(out), want) {
		t.Errorf("node-agent --version printed %q, want it to start with %q", out, want)
	}
}

// TestRequireTransformerAuthFlag: the probe is off unless asked for (transformers built on an
// older SDK keep working through an upgrade), and the flag turns it on.
func TestRequireTransformerAuthFlag(t *testing.T) {
	for args, want := range map[string]bool{"": false, "--require-transformer-auth": true, "--require-transformer-auth=false": false} {
		_, opts, err := parseFlags(strings.Fields(args), noEnv)
		if err != nil || opts.RequireTransformerAuth != want {
			t.Errorf("%q: %v, %v; want %v", args, opts.RequireTransformerAuth, err, want)
		}
	}
}

// TestCSIFlags: --csi serves under the kubelet's usual directory by default, takes another, and
// refuses a directory it could not mount under or bind its sockets in, naming the flag.
func TestCSIFlags(t *testing.T) {
	srv, opts, err := parseFlags([]string{"--csi"}, noEnv)
	if err != nil || !srv.csi || srv.kubeletDir != "/var/lib/kubelet" || srv.uid != 65532 || srv.gid != 65532 || opts.DataRoot != "/var/lib/mlkube/data" {
		t.Errorf("--csi: %+v, data root %s, %v; want /var/lib/kubelet, 65532:65532 and /var/lib/mlkube/data", srv, opts.DataRoot, err)
	}
	if srv, _, err := parseFlags([]string{"--csi", "--kubelet-dir=/var/lib/k0s/kubelet"}, noEnv); err != nil || srv.kubeletDir != "/var/lib/k0s/kubelet" {
		t.Errorf("--kubelet-dir=/var/lib/k0s/kubelet: %q, %v", srv.kubeletDir, err)
	}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--csi", "--kubelet-dir=var/lib/kubelet"}, "--kubelet-dir"},
		{[]string{"--csi", "--kubelet-dir=/var/lib/../kubelet"}, "--kubelet-dir"},
		{[]string{"--csi", "--kubelet-dir=/" + strings.Repeat("k", 80)}, "--kubelet-dir"},
		{[]string{"--csi", "--data-root=data"}, "--data-root"},
		{[]string{"--csi", "--prepare-data-root"}, "--prepare-data-root"},
	} {
		if _, _, err := parseFlags(tc.args, noEnv); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: %v, want it refused, naming %s", tc.args, err, tc.flag)
		}
	}
	if _, _, err := parseFlags([]string{"--kubelet-dir=relative"}, noEnv); err != nil {
		t.Errorf("--kubelet-dir without --csi: %v, want it ignored as the agent does not use it", err)
	}
}
