// Package egress decides where the node agent may fetch ?src= objects from. Off unless the
// operator names hosts; a named host is still refused when any address it resolves to is loopback,
// link-local (cloud metadata), unspecified, multicast, private (RFC 1918, RFC 4193, the CGNAT
// range), or inside a denied network (the cluster's pod and Service ranges, the API server),
// unless that network is allowed explicitly. The check
// runs in the dialer on the address actually dialled, after DNS, so a name that resolves to
// 127.0.0.1 (or rebinds between check and dial) cannot reach inside; redirects are not followed.
package egress

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// ErrRefused wraps every refusal, so the agent answers it as the caller's mistake (403).
var ErrRefused = errors.New("refused by the agent's egress policy")

// Policy is the operator's configuration of ?src= fetches.
type Policy struct {
	// Hosts that may be fetched from: "data.example.com", or "*.example.com" for its subdomains.
	// Empty turns ?src= off.
	Hosts []string
	// Denied networks beyond the always-refused ranges (loopback, link-local, multicast,
	// privateNetworks): the cluster's pod and Service CIDRs and the API server's addresses where
	// they are outside those.
	Denied []netip.Prefix
	// Allowed networks win over every refusal (for an object store inside the cluster, say).
	Allowed []netip.Prefix
	// AllowFlag is the agent's flag that sets Allowed, which refusals name; by default
	// --src-allowed-cidrs.
	AllowFlag string
}

// allowFlag is the flag refusals tell the operator to set.
func (p Policy) allowFlag() string {
	if p.AllowFlag != "" {
		return p.AllowFlag
	}
	return "--src-allowed-cidrs"
}

// Parse builds a Policy from comma-separated flag values, naming the bad entry on failure.
func Parse(hosts, denied, allowed string) (Policy, error) {
	var p Policy
	for _, h := range split(hosts) {
		if strings.ContainsAny(h, "/:@ ") || strings.Count(h, "*") > 1 || (strings.Contains(h, "*") && !strings.HasPrefix(h, "*.")) {
			return Policy{}, fmt.Errorf("--src-allowed-hosts: %q is not a host name or *.domain", h)
		}
		p.Hosts = append(p.Hosts, strings.ToLower(h))
	}
	var err error
	if p.Denied, err = prefixes("--src-denied-cidrs", denied); err != nil {
		return Policy{}, err
	}
	if p.Allowed, err = prefixes("--src-allowed-cidrs", allowed); err != nil {
		return Policy{}, err
	}
	return p, nil
}

// StoreFlag is the agent's flag that allows networks to object stores.
const StoreFlag = "--object-store-allowed-cidrs"

// StorePolicy is the policy of object store connections: the networks ?src= never reaches stay
// denied, allowed (StoreFlag) names the networks stores may be on beyond the defaults; the
// hosts are each store's own (objectstore.New).
func StorePolicy(denied []netip.Prefix, allowed string) (Policy, error) {
	a, err := prefixes(StoreFlag, allowed)
	return Policy{Denied: denied, Allowed: a, AllowFlag: StoreFlag}, err
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func prefixes(flag, s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range split(s) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			if a, aerr := netip.ParseAddr(f); aerr == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			} else {
				return nil, fmt.Errorf("%s: %q is not a CIDR or an address", flag, f)
			}
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Enabled says whether ?src= is on at all.
func (p Policy) Enabled() bool { return len(p.Hosts) > 0 }

// CheckURL refuses a URL whose scheme is not http(s) or whose host the operator did not allow.
func (p Policy) CheckURL(raw string) error {
	if !p.Enabled() {
		return fmt.Errorf("%w: ?src= is off on this agent; the operator turns it on for named hosts (--src-allowed-hosts)", ErrRefused)
	}
	u, err := parseURL(raw)
	if err != nil {
		return err
	}
	host := strings.ToLower(u.Hostname())
	for _, h := range p.Hosts {
		if host == h || (strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:])) {
			return nil
		}
	}
	return fmt.Errorf("%w: host %q is not among the allowed hosts %v; the operator allows more with --src-allowed-hosts", ErrRefused, host, p.Hosts)
}

// privateNetworks are refused unless allowed explicitly: a cluster's nodes, pods, Services and the
// services beside it (databases, internal object stores, a cloud's own endpoints) live in them on
// most installations, and a ?src= that reaches them lets any caller of the agent read what only
// the cluster's network was trusted to reach. The operator opens the one an object store lives in
// with --src-allowed-cidrs.
var privateNetworks = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),     // RFC 1918
	netip.MustParsePrefix("172.16.0.0/12"),  // RFC 1918
	netip.MustParsePrefix("192.168.0.0/16"), // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),  // RFC 6598, carrier-grade NAT (and some clusters' pod ranges)
	netip.MustParsePrefix("fc00::/7"),       // RFC 4193, unique local IPv6
}

// IPv6 prefixes that carry an IPv4 address in fixed bits: the well-known NAT64 prefix (RFC 6052,
// the last 32 bits), 6to4 (RFC 3056, bits 16 to 47) and the deprecated IPv4-compatible addresses
// (the last 32 bits). The local-use NAT64 prefix (RFC 8215) places them where its operator
// chooses, so it is refused whole unless allowed.
var (
	wellKnownNAT64 = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	localNAT64     = netip.MustParsePrefix("64:ff9b:1::/48")
)

// embeddedIPv4 is the IPv4 address an IPv6 address of those prefixes delivers to.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case wellKnownNAT64.Contains(a), ipv4Compatible.Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// CheckAddr refuses an address the policy keeps out of reach.
func (p Policy) CheckAddr(a netip.Addr) error {
	a = a.Unmap()
	for _, n := range p.Allowed {
		if n.Contains(a) {
			return nil
		}
	}
	switch {
	case a.IsLoopback(), a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast(), a.IsUnspecified(), a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return fmt.Errorf("%w: address %s is loopback, link-local, unspecified or multicast; the operator allows a network explicitly with %s", ErrRefused, a, p.allowFlag())
	}
	for _, n := range privateNetworks {
		if n.Contains(a) {
			return fmt.Errorf("%w: address %s is in the private network %s, refused unless allowed; the operator allows a network explicitly with %s", ErrRefused, a, n, p.allowFlag())
		}
	}
	if v4, ok := embeddedIPv4(a); ok {
		// A translator or tunnel delivers this address to the IPv4 one inside it, which is
		// judged as if dialled itself: on a NAT64 network 64:ff9b::a00:5 reaches 10.0.0.5.
		if err := p.CheckAddr(v4); err != nil {
			return fmt.Errorf("address %s carries the IPv4 address %s: %w", a, v4, err)
		}
	}
	if localNAT64.Contains(a) {
		return fmt.Errorf("%w: address %s is in the local-use NAT64 prefix %s, whose IPv4 addresses the network's operator places; the operator allows a network explicitly with %s", ErrRefused, a, localNAT64, p.allowFlag())
	}
	for _, n := range p.Denied {
		if n.Contains(a) {
			return fmt.Errorf("%w: address %s is in the denied network %s; the operator allows a network explicitly with %s", ErrRefused, a, n, p.allowFlag())
		}
	}
	return nil
}

// control is a net.Dialer Control function: it sees the address about to be dialled, after DNS.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse the dialled address %q", ErrRefused, address)
	}
	return p.CheckAddr(ap.Addr())
}

// Client returns an HTTP client that dials only what the policy allows and never follows a
// redirect (a redirect is the caller's to follow, through the agent again). headerTimeout bounds
// the wait for the answer's headers; the whole fetch is bounded by the request's context (the
// object's timeout), not by the client, because a large object may stream for longer.
func (p Policy) Client(headerTimeout time.Duration) *http.Client {
	return &http.Client{
		Transport: p.Transport(headerTimeout, nil),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return fmt.Errorf("%w: the source answered with a redirect, which the agent does not follow", ErrRefused)
		},
	}
}

// Transport returns an HTTP transport that dials only what the policy allows, through no proxy,
// with tlsConfig for https (nil: the system's roots); headerTimeout bounds the wait for an
// answer's headers.
func (p Policy) Transport(headerTimeout time.Duration, tlsConfig *tls.Config) *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	return &http.Transport{
		DialContext:           dialer.DialContext,
		Proxy:                 nil, // a proxy would dial on the agent's behalf, past the check
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: headerTimeout,
		DisableCompression:    true,
	}
}
