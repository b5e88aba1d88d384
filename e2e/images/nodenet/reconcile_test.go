package main

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
)

// fakeTable is a routing table that fails for destinations listed in fail.
type fakeTable struct {
	routes map[netip.Prefix]netip.Addr
	fail   map[netip.Prefix]bool
	calls  int
}

func newFakeTable() *fakeTable {
	return &fakeTable{routes: map[netip.Prefix]netip.Addr{}, fail: map[netip.Prefix]bool{}}
}

func (f *fakeTable) Replace(r Route) error {
	f.calls++
	if f.fail[r.Dst] {
		return errors.New("injected")
	}
	f.routes[r.Dst] = r.Via
	return nil
}

func (f *fakeTable) Delete(r Route) error {
	f.calls++
	if f.fail[r.Dst] {
		return errors.New("injected")
	}
	delete(f.routes, r.Dst)
	return nil
}

func (f *fakeTable) has(t *testing.T, want ...Route) {
	t.Helper()
	if len(f.routes) != len(want) {
		t.Errorf("table %v, want %v", f.routes, want)
	}
	for _, r := range want {
		if f.routes[r.Dst] != r.Via {
			t.Errorf("table %v, want %v", f.routes, r)
		}
	}
}

func TestReconcile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "10-nodenet.conflist")
	table := newFakeTable()
	stale := route("10.244.9.0/24", "172.18.0.9", "?")
	table.routes[stale.Dst] = stale.Via
	r := newReconciler("self", conf, table, []Route{stale})

	// The node comes up without a pod CIDR: no config yet, but the others' routes, and the route
	// left by an earlier run for a node that no longer exists goes.
	b := node("b", []string{"10.244.1.0/24"}, "172.18.0.3")
	c := node("c", []string{"10.244.2.0/24"}, "172.18.0.4")
	if !r.reconcile([]*corev1.Node{node("self", nil, "172.18.0.2"), b, c}, false) {
		t.Error("reconcile failed")
	}
	if _, err := os.Stat(conf); !os.IsNotExist(err) {
		t.Errorf("config written before the node had a pod CIDR: %v", err)
	}
	table.has(t, route("10.244.1.0/24", "172.18.0.3", "b"), route("10.244.2.0/24", "172.18.0.4", "c"))

	// The CIDR arrives, and so does d, whose route fails to go in and is retried by the next pass.
	self := node("self", []string{"10.244.0.0/24"}, "172.18.0.2")
	d := node("d", []string{"10.244.3.0/24"}, "172.18.0.5")
	table.fail[netip.MustParsePrefix("10.244.3.0/24")] = true
	if r.reconcile([]*corev1.Node{self, b, c, d}, false) {
		t.Error("reconcile succeeded despite a failed route")
	}
	if data, err := os.ReadFile(conf); err != nil || !strings.Contains(string(data), "10.244.0.0/24") {
		t.Errorf("config %q (%v), want one for 10.244.0.0/24", data, err)
	}
	table.fail = map[netip.Prefix]bool{}
	table.calls = 0
	if !r.reconcile([]*corev1.Node{self, b, c, d}, false) {
		t.Error("reconcile failed")
	}
	if table.calls != 1 {
		t.Errorf("%d route calls, want only the failed route retried", table.calls)
	}
	table.has(t, route("10.244.1.0/24", "172.18.0.3", "b"), route("10.244.2.0/24", "172.18.0.4", "c"), route("10.244.3.0/24", "172.18.0.5", "d"))

	// c goes away; someone deletes b's route by hand, which only a forced pass puts back.
	delete(table.routes, netip.MustParsePrefix("10.244.1.0/24"))
	r.reconcile([]*corev1.Node{self, b, d}, false)
	table.has(t, route("10.244.3.0/24", "172.18.0.5", "d"))
	r.reconcile([]*corev1.Node{self, b, d}, true)
	table.has(t, route("10.244.1.0/24", "172.18.0.3", "b"), route("10.244.3.0/24", "172.18.0.5", "d"))
}

func TestRestConfig(t *testing.T) {
	inCluster := func() (*rest.Config, error) { return &rest.Config{Host: "https://10.96.0.1:443"}, nil }
	cfg, err := restConfig("", inCluster)
	if err != nil || cfg.Host != "https://10.96.0.1:443" {
		t.Errorf("no endpoint: %+v, %v; want the in-cluster config", cfg, err)
	}
	for endpoint, want := range map[string]string{
		"kind-control-plane:6443": "https://kind-control-plane:6443",
		"[fc00:f853::2]:6443":     "https://[fc00:f853::2]:6443",
	} {
		cfg, err := restConfig(endpoint, inCluster)
		if err != nil {
			t.Errorf("%s: %v", endpoint, err)
			continue
		}
		if cfg.Host != want || cfg.BearerTokenFile != saTokenFile || cfg.CAFile != saCAFile {
			t.Errorf("%s: host %q token %q CA %q, want %q with the service account's token and CA", endpoint, cfg.Host, cfg.BearerTokenFile, cfg.CAFile, want)
		}
	}
	for _, bad := range []string{"kind-control-plane", "https://kind-control-plane:6443"} {
		if cfg, err := restConfig(bad, inCluster); err == nil {
			t.Errorf("%s: %+v, want an error", bad, cfg)
		}
	}
}
