package main

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// node makes a Node named name with the given pod CIDRs and InternalIPs.
func node(name string, cidrs []string, ips ...string) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDRs: cidrs}}
	if len(cidrs) > 0 {
		n.Spec.PodCIDR = cidrs[0]
	}
	n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeHostName, Address: name})
	for _, ip := range ips {
		n.Status.Addresses = append(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: ip})
	}
	return n
}

func route(dst, via, node string) Route {
	return Route{Dst: netip.MustParsePrefix(dst), Via: netip.MustParseAddr(via), Node: node}
}

func TestDesiredRoutes(t *testing.T) {
	for name, tc := range map[string]struct {
		nodes   []*corev1.Node
		want    []Route
		wantErr []string // substrings, one per expected error, in order
	}{
		"self is excluded": {
			nodes: []*corev1.Node{
				node("self", []string{"10.244.0.0/24"}, "172.18.0.2"),
				node("b", []string{"10.244.1.0/24"}, "172.18.0.3"),
				node("c", []string{"10.244.2.0/24"}, "172.18.0.4"),
			},
			want: []Route{route("10.244.1.0/24", "172.18.0.3", "b"), route("10.244.2.0/24", "172.18.0.4", "c")},
		},
		"no pod CIDR yet or no InternalIP: skipped quietly": {
			nodes: []*corev1.Node{
				node("self", []string{"10.244.0.0/24"}, "172.18.0.2"),
				node("new", nil, "172.18.0.3"),
				node("noip", []string{"10.244.2.0/24"}),
				node("ok", []string{"10.244.3.0/24"}, "172.18.0.5"),
			},
			want: []Route{route("10.244.3.0/24", "172.18.0.5", "ok")},
		},
		"legacy spec.podCIDR alone": {
			nodes: []*corev1.Node{
				{ObjectMeta: metav1.ObjectMeta{Name: "old"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"},
					Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "172.18.0.3"}}}},
			},
			want: []Route{route("10.244.1.0/24", "172.18.0.3", "old")},
		},
		"dual-stack pairs each CIDR with the IP of its family, whatever the order": {
			nodes: []*corev1.Node{
				node("self", []string{"10.244.0.0/24", "fd00:10:244::/64"}, "172.18.0.2", "fc00:f853:ccd:e793::2"),
				node("b", []string{"fd00:10:244:1::/64", "10.244.1.0/24"}, "172.18.0.3", "fc00:f853:ccd:e793::3"),
			},
			want: []Route{route("10.244.1.0/24", "172.18.0.3", "b"), route("fd00:10:244:1::/64", "fc00:f853:ccd:e793::3", "b")},
		},
		"a family without an InternalIP gets no route": {
			nodes: []*corev1.Node{
				node("b", []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, "172.18.0.3"),
				node("c", []string{"10.244.2.0/24"}, "fc00::4"),
			},
			want: []Route{route("10.244.1.0/24", "172.18.0.3", "b")},
		},
		"first InternalIP of the family is the gateway": {
			nodes: []*corev1.Node{node("b", []string{"10.244.1.0/24"}, "fc00::3", "172.18.0.3", "172.18.0.99")},
			want:  []Route{route("10.244.1.0/24", "172.18.0.3", "b")},
		},
		"host bits of a CIDR are masked off": {
			nodes: []*corev1.Node{node("b", []string{"10.244.1.7/24"}, "172.18.0.3")},
			want:  []Route{route("10.244.1.0/24", "172.18.0.3", "b")},
		},
		"bad strings are reported and skipped, the rest still routed": {
			nodes: []*corev1.Node{
				node("bad", []string{"banana", "10.244.1.0/24"}, "not-an-ip", "172.18.0.3"),
				node("c", []string{"10.244.2.0/24"}, "172.18.0.4"),
			},
			want:    []Route{route("10.244.1.0/24", "172.18.0.3", "bad"), route("10.244.2.0/24", "172.18.0.4", "c")},
			wantErr: []string{`"banana"`, `"not-an-ip"`},
		},
		"nil and nameless nodes are reported and skipped": {
			nodes:   []*corev1.Node{nil, {}, node("b", []string{"10.244.1.0/24"}, "172.18.0.3")},
			want:    []Route{route("10.244.1.0/24", "172.18.0.3", "b")},
			wantErr: []string{"without a name", "without a name"},
		},
		"a CIDR overlapping this node's own is never routed": {
			nodes: []*corev1.Node{
				node("self", []string{"10.244.0.0/24"}, "172.18.0.2"),
				node("liar", []string{"10.244.0.0/16"}, "172.18.0.3"),
			},
			wantErr: []string{"overlaps"},
		},
		"two nodes claiming one CIDR: first by name wins": {
			nodes: []*corev1.Node{
				node("z", []string{"10.244.1.0/24"}, "172.18.0.9"),
				node("a", []string{"10.244.1.0/24"}, "172.18.0.3"),
			},
			want:    []Route{route("10.244.1.0/24", "172.18.0.3", "a")},
			wantErr: []string{"node z: pod CIDR 10.244.1.0/24 is also node a's"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got, errs := desiredRoutes("self", tc.nodes)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
				cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
			if len(errs) != len(tc.wantErr) {
				t.Fatalf("errors = %v, want %d matching %q", errs, len(tc.wantErr), tc.wantErr)
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tc.wantErr[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, err, tc.wantErr[i])
				}
			}
		})
	}
}

func TestDiffRoutes(t *testing.T) {
	b := route("10.244.1.0/24", "172.18.0.3", "b")
	c := route("10.244.2.0/24", "172.18.0.4", "c")
	cMoved := route("10.244.2.0/24", "172.18.0.40", "c")
	d := route("10.244.3.0/24", "172.18.0.5", "d")
	adopted := route("10.244.9.0/24", "172.18.0.9", "?")
	v6 := route("fd00:10:244:1::/64", "fc00::3", "b")
	installed := func(rs ...Route) map[netip.Prefix]Route {
		m := map[netip.Prefix]Route{}
		for _, r := range rs {
			m[r.Dst] = r
		}
		return m
	}
	for name, tc := range map[string]struct {
		desired              []Route
		installed            map[netip.Prefix]Route
		wantReplace, wantDel []Route
	}{
		"first pass installs all":      {desired: []Route{b, c, v6}, installed: installed(), wantReplace: []Route{b, c, v6}},
		"nothing changed":              {desired: []Route{b, c}, installed: installed(b, c)},
		"new node":                     {desired: []Route{b, c, d}, installed: installed(b, c), wantReplace: []Route{d}},
		"node gone":                    {desired: []Route{b}, installed: installed(b, c), wantDel: []Route{c}},
		"node changed IP":              {desired: []Route{b, cMoved}, installed: installed(b, c), wantReplace: []Route{cMoved}},
		"adopted route of a gone node": {desired: []Route{b}, installed: installed(b, adopted), wantDel: []Route{adopted}},
		"adopted route still wanted: the node name alone does not count": {
			desired: []Route{c}, installed: installed(route("10.244.2.0/24", "172.18.0.4", "?")),
		},
		"everything gone":    {installed: installed(b, v6), wantDel: []Route{b, v6}},
		"replace and delete": {desired: []Route{d, b}, installed: installed(c, b), wantReplace: []Route{d}, wantDel: []Route{c}},
	} {
		t.Run(name, func(t *testing.T) {
			replace, del := diffRoutes(tc.desired, tc.installed)
			opts := []cmp.Option{cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })}
			if diff := cmp.Diff(tc.wantReplace, replace, opts...); diff != "" {
				t.Errorf("replace (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDel, del, opts...); diff != "" {
				t.Errorf("delete (-want +got):\n%s", diff)
			}
		})
	}
}
