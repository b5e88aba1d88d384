//go:build linux

package main

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// routeProtocol marks the routes nodenet installs (rtm_protocol; the kernel does not interpret
// values above RTPROT_STATIC, and 110 is not one a common routing daemon uses). It lets a restarted
// nodenet find the routes an earlier run left behind, and it makes deletes match only nodenet's
// own routes: the kernel compares the protocol of a delete request with the route's.
const routeProtocol netlink.RouteProtocol = 110

// kernelRoutes is the host's main routing table, reached with netlink from the hostNetwork pod
// (which needs CAP_NET_ADMIN for it).
type kernelRoutes struct{}

func (kernelRoutes) toNetlink(r Route) *netlink.Route {
	return &netlink.Route{
		Dst:      &net.IPNet{IP: net.IP(r.Dst.Addr().AsSlice()), Mask: net.CIDRMask(r.Dst.Bits(), r.Dst.Addr().BitLen())},
		Gw:       net.IP(r.Via.AsSlice()),
		Protocol: routeProtocol,
		Table:    unix.RT_TABLE_MAIN,
	}
}

// Replace installs r, or changes the gateway of a route to the same destination.
func (k kernelRoutes) Replace(r Route) error {
	return netlink.RouteReplace(k.toNetlink(r))
}

// Delete removes r; a route already gone is not an error, since the goal is its absence.
func (k kernelRoutes) Delete(r Route) error {
	err := netlink.RouteDel(k.toNetlink(r))
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// Installed returns the routes marked with routeProtocol in the main table, both families: those
// an earlier run of nodenet installed. Their Node is unknown.
func (kernelRoutes) Installed() ([]Route, error) {
	filter := &netlink.Route{Protocol: routeProtocol, Table: unix.RT_TABLE_MAIN}
	rs, err := netlink.RouteListFiltered(netlink.FAMILY_ALL, filter, netlink.RT_FILTER_PROTOCOL|netlink.RT_FILTER_TABLE)
	if err != nil {
		return nil, err
	}
	var out []Route
	for _, r := range rs {
		if r.Dst == nil || r.Gw == nil {
			continue
		}
		ip, ok := netip.AddrFromSlice(r.Dst.IP)
		gw, gok := netip.AddrFromSlice(r.Gw)
		ones, _ := r.Dst.Mask.Size()
		if !ok || !gok {
			return nil, fmt.Errorf("unreadable route %v", r)
		}
		out = append(out, Route{Dst: netip.PrefixFrom(ip.Unmap(), ones).Masked(), Via: gw.Unmap(), Node: "?"})
	}
	return out, nil
}
