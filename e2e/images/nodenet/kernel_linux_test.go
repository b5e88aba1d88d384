//go:build linux

package main

import (
	"net"
	"net/netip"
	"runtime"
	"slices"
	"testing"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// inNetns runs f on a thread of its own in a new, empty network namespace, with a veth whose end
// v0 has 172.18.0.2/16 and fc00::2/64, as a kind node's eth0 has on the docker network. The
// thread stays locked and so dies with the goroutine: no other code ever runs in that namespace.
// It skips the test where namespaces cannot be made (not root, or no CAP_SYS_ADMIN).
func inNetns(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	skip := ""
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread's namespace is the test's alone
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			skip = "no network namespace: " + err.Error()
			return
		}
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "v0"}, PeerName: "v1"}
		if err := netlink.LinkAdd(veth); err != nil {
			skip = "no veth: " + err.Error()
			return
		}
		for _, name := range []string{"v0", "v1"} {
			l, err := netlink.LinkByName(name)
			if err != nil {
				t.Error(err)
				return
			}
			if err := netlink.LinkSetUp(l); err != nil {
				t.Error(err)
				return
			}
			if name != "v0" {
				continue
			}
			for _, a := range []string{"172.18.0.2/16", "fc00::2/64"} {
				addr, _ := netlink.ParseAddr(a)
				addr.Flags = unix.IFA_F_NODAD // usable at once, no duplicate address detection
				if err := netlink.AddrAdd(l, addr); err != nil {
					t.Error(err)
					return
				}
			}
		}
		f()
	}()
	<-done
	if skip != "" {
		t.Skip(skip)
	}
}

// TestKernelRoutes installs, adopts and deletes routes in a scratch network namespace, and shows
// that a route of the same destination and gateway that nodenet did not install is left alone.
func TestKernelRoutes(t *testing.T) {
	inNetns(t, func() {
		var k kernelRoutes
		b := route("10.244.1.0/24", "172.18.0.3", "b")
		b6 := route("fd00:10:244:1::/64", "fc00::3", "b")
		for _, r := range []Route{b, b6} {
			if err := k.Replace(r); err != nil {
				t.Errorf("Replace(%v): %v", r, err)
			}
		}
		// Replacing with a new gateway changes the route in place.
		moved := route("10.244.1.0/24", "172.18.0.30", "b")
		if err := k.Replace(moved); err != nil {
			t.Errorf("Replace(%v): %v", moved, err)
		}
		// Someone else's route to another destination.
		_, other, _ := net.ParseCIDR("10.244.5.0/24")
		if err := netlink.RouteAdd(&netlink.Route{Dst: other, Gw: net.ParseIP("172.18.0.9")}); err != nil {
			t.Fatal(err)
		}

		got, err := k.Installed()
		if err != nil {
			t.Fatal(err)
		}
		dsts := map[netip.Prefix]netip.Addr{}
		for _, r := range got {
			dsts[r.Dst] = r.Via
		}
		want := map[netip.Prefix]netip.Addr{moved.Dst: moved.Via, b6.Dst: b6.Via}
		if len(dsts) != len(want) || dsts[moved.Dst] != moved.Via || dsts[b6.Dst] != b6.Via {
			t.Errorf("Installed = %v, want %v", got, want)
		}

		// Deleting the other route as if it were nodenet's does nothing: the protocol differs.
		if err := k.Delete(route("10.244.5.0/24", "172.18.0.9", "x")); err != nil {
			t.Errorf("Delete of a foreign route: %v", err)
		}
		rs, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Dst: other}, netlink.RT_FILTER_DST)
		if err != nil || len(rs) != 1 {
			t.Errorf("foreign route after Delete: %v, %v; want it still there", rs, err)
		}

		for _, r := range []Route{moved, b6, moved} { // the second delete of moved finds nothing
			if err := k.Delete(r); err != nil {
				t.Errorf("Delete(%v): %v", r, err)
			}
		}
		if got, err := k.Installed(); err != nil || len(got) != 0 {
			t.Errorf("Installed after deletes = %v, %v; want none", got, err)
		}
		all, _ := netlink.RouteList(nil, netlink.FAMILY_V4)
		if !slices.ContainsFunc(all, func(r netlink.Route) bool { return r.Dst != nil && r.Dst.String() == "10.244.5.0/24" }) {
			t.Errorf("routes %v: the foreign route is gone", all)
		}
	})
}
