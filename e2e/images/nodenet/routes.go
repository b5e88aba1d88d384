package main

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Route is one route nodenet keeps in the host network namespace: the pod CIDR of another node,
// reached through that node's InternalIP on the shared L2 network of the kind nodes.
type Route struct {
	Dst netip.Prefix
	Via netip.Addr
	// Node is the node the route leads to; it is for logs only and takes no part in comparisons,
	// since a route installed by an earlier run of nodenet is known by its destination alone.
	Node string
}

func (r Route) String() string {
	return fmt.Sprintf("%s via %s (%s)", r.Dst, r.Via, r.Node)
}

// podCIDRs returns the node's pod CIDRs, masked to their network address. spec.podCIDR is read
// only when spec.podCIDRs is empty, as on API servers that predate dual-stack; unparseable entries
// are reported and left out, so one bad string never hides the node's other CIDRs.
func podCIDRs(n *corev1.Node) ([]netip.Prefix, []error) {
	raw := n.Spec.PodCIDRs
	if len(raw) == 0 && n.Spec.PodCIDR != "" {
		raw = []string{n.Spec.PodCIDR}
	}
	var out []netip.Prefix
	var errs []error
	for _, s := range raw {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: pod CIDR %q: %w", n.Name, s, err))
			continue
		}
		out = append(out, p.Masked())
	}
	return out, errs
}

// internalIPs returns the node's InternalIP addresses in the order the node reports them; other
// address types (ExternalIP, Hostname) are not reachable on the node network as such.
func internalIPs(n *corev1.Node) ([]netip.Addr, []error) {
	var out []netip.Addr
	var errs []error
	for _, a := range n.Status.Addresses {
		if a.Type != corev1.NodeInternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err != nil {
			errs = append(errs, fmt.Errorf("node %s: InternalIP %q: %w", n.Name, a.Address, err))
			continue
		}
		out = append(out, ip.Unmap())
	}
	return out, errs
}

// sameFamily pairs a pod CIDR with a node IP: a route's gateway must be of its destination's
// family, so on a dual-stack node the IPv4 CIDR goes via the IPv4 InternalIP and the IPv6 CIDR via
// the IPv6 one.
func sameFamily(p netip.Prefix, ip netip.Addr) bool {
	return p.Addr().Is4() == ip.Is4()
}

// desiredRoutes returns the routes the node named self needs, sorted by destination: one per pod
// CIDR of every other node, via that node's first InternalIP of the CIDR's family. Nodes without a
// pod CIDR (not yet allocated) or without an InternalIP of the family are skipped. A CIDR that
// overlaps one of self's own is skipped: replacing it would take over the connected route of the
// local bridge. When two nodes claim the same CIDR, the node first by name wins. Every skip that
// points at a broken object rather than a node still coming up is returned as an error to log; none
// stops the other nodes' routes.
func desiredRoutes(self string, nodes []*corev1.Node) ([]Route, []error) {
	var errs []error
	var own []netip.Prefix
	var others []*corev1.Node
	for _, n := range nodes {
		switch {
		case n == nil || n.Name == "":
			errs = append(errs, fmt.Errorf("skipping a node object without a name"))
		case n.Name == self:
			cidrs, _ := podCIDRs(n) // errors about self are the conflist's to report
			own = cidrs
		default:
			others = append(others, n)
		}
	}
	slices.SortFunc(others, func(a, b *corev1.Node) int { return cmp.Compare(a.Name, b.Name) })

	byDst := map[netip.Prefix]Route{}
	for _, n := range others {
		cidrs, cerrs := podCIDRs(n)
		ips, ierrs := internalIPs(n)
		errs = append(append(errs, cerrs...), ierrs...)
		for _, c := range cidrs {
			if slices.ContainsFunc(own, c.Overlaps) {
				errs = append(errs, fmt.Errorf("node %s: pod CIDR %s overlaps this node's %v; no route", n.Name, c, own))
				continue
			}
			i := slices.IndexFunc(ips, func(ip netip.Addr) bool { return sameFamily(c, ip) })
			if i < 0 {
				continue // no InternalIP of this family (yet): nothing to route through
			}
			if prev, ok := byDst[c]; ok {
				errs = append(errs, fmt.Errorf("node %s: pod CIDR %s is also node %s's; keeping %s's", n.Name, c, prev.Node, prev.Node))
				continue
			}
			byDst[c] = Route{Dst: c, Via: ips[i], Node: n.Name}
		}
	}
	return sortedRoutes(byDst), errs
}

// diffRoutes compares the desired routes with those installed before (by destination) and returns
// the routes to replace (new, or with a new gateway) and those to delete (their node is gone or has
// a CIDR no more), each sorted by destination.
func diffRoutes(desired []Route, installed map[netip.Prefix]Route) (replace, remove []Route) {
	want := map[netip.Prefix]Route{}
	for _, r := range desired {
		want[r.Dst] = r
		if old, ok := installed[r.Dst]; !ok || old.Via != r.Via {
			replace = append(replace, r)
		}
	}
	gone := map[netip.Prefix]Route{}
	for dst, r := range installed {
		if _, ok := want[dst]; !ok {
			gone[dst] = r
		}
	}
	slices.SortFunc(replace, compareRoutes)
	return replace, sortedRoutes(gone)
}

func compareRoutes(a, b Route) int {
	if c := a.Dst.Addr().Compare(b.Dst.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Dst.Bits(), b.Dst.Bits())
}

func sortedRoutes(m map[netip.Prefix]Route) []Route {
	var out []Route
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, compareRoutes)
	return out
}
