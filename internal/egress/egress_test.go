package egress

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, hosts, denied, allowed string) Policy {
	t.Helper()
	p, err := Parse(hosts, denied, allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseNamesTheBadEntry(t *testing.T) {
	for name, tc := range map[string]struct{ hosts, denied, allowed, want string }{
		"url as host":     {hosts: "http://x", want: `--src-allowed-hosts: "http://x"`},
		"wildcard inside": {hosts: "a.*.com", want: `"a.*.com" is not a host name`},
		"bad cidr":        {denied: "10.0.0.0/99", want: `--src-denied-cidrs: "10.0.0.0/99"`},
		"bad allowed":     {allowed: "nope", want: `--src-allowed-cidrs: "nope"`},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(tc.hosts, tc.denied, tc.allowed); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error containing %s", err, tc.want)
			}
		})
	}
}

func TestCheckURL(t *testing.T) {
	p := mustParse(t, "data.example.com, *.store.example.org", "", "")
	for u, ok := range map[string]bool{
		"http://data.example.com/a":           true,
		"https://eu.store.example.org/b":      true,
		"http://store.example.org/b":          false, // *.x matches subdomains only
		"http://evil.com/?data.example.com":   false,
		"ftp://data.example.com/a":            false,
		"http://user:pw@data.example.com/a":   false,
		"http://data.example.com.evil.com/a":  false,
		"http://" + strings.Repeat("a", 3000): false,
	} {
		if err := p.CheckURL(u); (err == nil) != ok || (err != nil && !errors.Is(err, ErrRefused)) {
			t.Errorf("CheckURL(%.60s) = %v, want allowed=%v", u, err, ok)
		}
	}
	if err := (Policy{}).CheckURL("http://data.example.com/a"); err == nil || !strings.Contains(err.Error(), "off on this agent") {
		t.Errorf("with no hosts: %v, want ?src= off", err)
	}
}

func TestCheckAddr(t *testing.T) {
	p := mustParse(t, "x", "10.96.0.0/12, 10.244.0.0/16, 192.168.1.5", "10.96.100.0/24")
	for a, ok := range map[string]bool{
		"93.184.216.34":    true,
		"127.0.0.1":        false,
		"::1":              false,
		"::ffff:127.0.0.1": false, // v4-mapped loopback
		"169.254.169.254":  false, // cloud metadata
		"fe80::1":          false,
		"0.0.0.0":          false,
		"10.96.0.1":        false, // the API server's ClusterIP
		"10.244.3.7":       false, // a pod
		"192.168.1.5":      false, // a single denied address
		"10.96.100.9":      true,  // allowed explicitly
	} {
		if err := p.CheckAddr(netip.MustParseAddr(a)); (err == nil) != ok {
			t.Errorf("CheckAddr(%s) = %v, want allowed=%v", a, err, ok)
		}
	}
}

// TestPrivateNetworksRefusedByDefault: with hosts allowed and nothing else configured, an address
// of a private network (RFC 1918, RFC 4193, the CGNAT range of RFC 6598) is refused like loopback,
// naming its network and the flag that opens it; --src-allowed-cidrs opens exactly what it names.
func TestPrivateNetworksRefusedByDefault(t *testing.T) {
	for _, tc := range []struct {
		addr, allowed string
		refusedIn     string // the network the refusal names; "" when the address is allowed
	}{
		{addr: "10.0.0.1", refusedIn: "10.0.0.0/8"},
		{addr: "10.255.255.255", refusedIn: "10.0.0.0/8"},
		{addr: "172.16.0.1", refusedIn: "172.16.0.0/12"},
		{addr: "172.31.255.254", refusedIn: "172.16.0.0/12"},
		{addr: "192.168.0.1", refusedIn: "192.168.0.0/16"},
		{addr: "100.64.0.1", refusedIn: "100.64.0.0/10"},
		{addr: "100.127.255.254", refusedIn: "100.64.0.0/10"},
		{addr: "fc00::1", refusedIn: "fc00::/7"},
		{addr: "fd12:3456::1", refusedIn: "fc00::/7"},
		{addr: "::ffff:192.168.1.1", refusedIn: "192.168.0.0/16"}, // v4-mapped
		{addr: "172.15.255.254"},                                  // just below 172.16.0.0/12
		{addr: "172.32.0.1"},                                      // just above it
		{addr: "100.63.255.254"},                                  // just below the CGNAT range
		{addr: "100.128.0.1"},                                     // just above it
		{addr: "11.0.0.1"},                                        // a public address
		{addr: "2606:4700::1111"},                                 // a public IPv6 address
		{addr: "fe00::1"},                                         // outside fc00::/7
		{addr: "10.1.2.3", allowed: "10.1.0.0/16"},
		{addr: "10.2.0.1", allowed: "10.1.0.0/16", refusedIn: "10.0.0.0/8"},
		{addr: "fd00::5", allowed: "fd00::/64"},
		{addr: "100.64.7.7", allowed: "100.64.7.7"},
	} {
		p := mustParse(t, "x", "", tc.allowed)
		err := p.CheckAddr(netip.MustParseAddr(tc.addr))
		switch {
		case tc.refusedIn == "" && err != nil:
			t.Errorf("CheckAddr(%s) with allowed %q = %v; want it allowed", tc.addr, tc.allowed, err)
		case tc.refusedIn == "":
		case !errors.Is(err, ErrRefused):
			t.Errorf("CheckAddr(%s) with allowed %q = %v; want it refused", tc.addr, tc.allowed, err)
		case !strings.Contains(err.Error(), "private network "+tc.refusedIn) || !strings.Contains(err.Error(), "--src-allowed-cidrs"):
			t.Errorf("CheckAddr(%s) = %q; want it to name the private network %s and --src-allowed-cidrs", tc.addr, err, tc.refusedIn)
		}
	}
}

// TestIPv4InsideIPv6IsJudgedAsIPv4: the IPv6 forms a translator or tunnel delivers to an IPv4
// address (NAT64's well-known prefix, 6to4, IPv4-compatible) are judged by that IPv4 address, so
// they reach nothing the IPv4 address itself could not; NAT64 to a public address still passes,
// as an IPv6-only cluster needs it to reach a public store. The local-use NAT64 prefix is refused
// whole unless allowed.
func TestIPv4InsideIPv6IsJudgedAsIPv4(t *testing.T) {
	for _, tc := range []struct {
		addr, allowed string
		refused       string // what the refusal names; "" when the address is allowed
	}{
		{addr: "64:ff9b::a00:5", refused: "private network 10.0.0.0/8"},       // 10.0.0.5
		{addr: "64:ff9b::a9fe:a9fe", refused: "169.254.169.254"},              // cloud metadata
		{addr: "64:ff9b::7f00:1", refused: "127.0.0.1"},                       // loopback
		{addr: "2002:a00:5::1", refused: "private network 10.0.0.0/8"},        // 6to4 of 10.0.0.5
		{addr: "2002:c0a8:101::1", refused: "private network 192.168.0.0/16"}, // 6to4 of 192.168.1.1
		{addr: "::a00:5", refused: "private network 10.0.0.0/8"},              // IPv4-compatible
		{addr: "64:ff9b:1::a00:5", refused: "local-use NAT64 prefix 64:ff9b:1::/48"},
		{addr: "64:ff9b::5db8:d822"},                     // NAT64 of 93.184.216.34
		{addr: "2002:5db8:d822::1"},                      // 6to4 of it
		{addr: "64:ff9b::a00:5", allowed: "10.0.0.0/24"}, // its IPv4 network allowed
		{addr: "64:ff9b:1::a00:5", allowed: "64:ff9b:1::/48"},
	} {
		p := mustParse(t, "x", "", tc.allowed)
		err := p.CheckAddr(netip.MustParseAddr(tc.addr))
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("CheckAddr(%s) with allowed %q = %v; want it allowed", tc.addr, tc.allowed, err)
		case tc.refused == "":
		case !errors.Is(err, ErrRefused):
			t.Errorf("CheckAddr(%s) with allowed %q = %v; want it refused", tc.addr, tc.allowed, err)
		case !strings.Contains(err.Error(), tc.refused) || !strings.Contains(err.Error(), tc.addr):
			t.Errorf("CheckAddr(%s) = %q; want it to name the address and %s", tc.addr, err, tc.refused)
		}
	}
}

// TestClientChecksTheDialledAddress: a host that passes the name check but resolves to loopback
// is refused at the dial, and nothing reaches the server.
func TestClientChecksTheDialledAddress(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	p := mustParse(t, "localhost", "", "")
	if err := p.CheckURL("http://localhost" + port); err != nil {
		t.Fatalf("the name is allowed: %v", err)
	}
	resp, err := p.Client(5 * time.Second).Get("http://localhost" + port + "/x")
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrRefused) || hits != 0 {
		t.Errorf("GET = %v with %d hits; want refused before reaching the server", err, hits)
	}
}

func TestClientFollowsNoRedirect(t *testing.T) {
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "secret") }))
	defer inner.Close()
	outer := httptest.NewServer(http.RedirectHandler(inner.URL, http.StatusFound))
	defer outer.Close()
	p := mustParse(t, "127.0.0.1", "", "127.0.0.0/8") // loopback allowed only to reach the test servers
	resp, err := p.Client(5 * time.Second).Get(outer.URL)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("GET of a redirect = %v; want refused", err)
	}
}

// TestClientDoesNotCutALongBody: the header timeout bounds only the wait for the answer; a body
// that streams for longer (a large object) is read to its end, bounded by the request's context.
func TestClientDoesNotCutALongBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "first ")
		w.(http.Flusher).Flush()
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "last")
	}))
	defer srv.Close()
	p := mustParse(t, "127.0.0.1", "", "127.0.0.0/8")
	resp, err := p.Client(100 * time.Millisecond).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, err := io.ReadAll(resp.Body); err != nil || string(body) != "first last" {
		t.Errorf("body %q, %v; want it whole", body, err)
	}
}
