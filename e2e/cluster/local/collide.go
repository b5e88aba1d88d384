package local

import (
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// checkPlanIsFree refuses to lay out the network when the host already routes part of the plan's
// prefixes (`ip -4 route` after teardown): those addresses would be somebody else's, and the
// cluster's routes would capture traffic meant for them.
func checkPlanIsFree(p Plan) error {
	out, err := exec.Command("ip", "-4", "-o", "route", "show").Output()
	if err != nil {
		return fmt.Errorf("ip route: %w", err)
	}
	if clash := overlappingRoutes(string(out), p); len(clash) > 0 {
		return fmt.Errorf("the host already routes %v, which overlaps the cluster's %s, %s or %s",
			clash, p.Subnet, p.ServiceCIDR, p.PodCIDR)
	}
	return nil
}

// overlappingRoutes lists the destinations in `ip -o route` output that overlap the plan.
func overlappingRoutes(routes string, p Plan) []string {
	var clash []string
	for _, line := range strings.Split(routes, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || fields[0] == "default" {
			continue
		}
		dst, err := netip.ParsePrefix(fields[0])
		if err != nil {
			addr, aerr := netip.ParseAddr(fields[0])
			if aerr != nil {
				continue
			}
			dst = netip.PrefixFrom(addr, addr.BitLen())
		}
		for _, ours := range []netip.Prefix{p.Subnet, p.ServiceCIDR, p.PodCIDR} {
			if dst.Overlaps(ours) {
				clash = append(clash, fields[0])
				break
			}
		}
	}
	return clash
}
