package main

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// parsedConflist is the conflist as a CNI runtime reads it, typed independently of the structs
// that render it, so a wrong JSON tag shows up here.
type parsedConflist struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []struct {
		Type         string          `json:"type"`
		Bridge       string          `json:"bridge"`
		IsGateway    *bool           `json:"isGateway"`
		IPMasq       *bool           `json:"ipMasq"`
		HairpinMode  *bool           `json:"hairpinMode"`
		Capabilities map[string]bool `json:"capabilities"`
		IPAM         *struct {
			Type   string `json:"type"`
			Ranges [][]struct {
				Subnet string `json:"subnet"`
			} `json:"ranges"`
			Routes []struct {
				Dst string `json:"dst"`
			} `json:"routes"`
		} `json:"ipam"`
	} `json:"plugins"`
}

func TestRenderConflist(t *testing.T) {
	for name, tc := range map[string]struct {
		cidrs       []string
		wantSubnets []string
		wantRoutes  []string
	}{
		"IPv4":       {cidrs: []string{"10.244.1.0/24"}, wantSubnets: []string{"10.244.1.0/24"}, wantRoutes: []string{"0.0.0.0/0"}},
		"dual-stack": {cidrs: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, wantSubnets: []string{"10.244.1.0/24", "fd00:10:244:1::/64"}, wantRoutes: []string{"0.0.0.0/0", "::/0"}},
		"IPv6 only":  {cidrs: []string{"fd00:10:244:1::/64"}, wantSubnets: []string{"fd00:10:244:1::/64"}, wantRoutes: []string{"::/0"}},
	} {
		t.Run(name, func(t *testing.T) {
			var cidrs []netip.Prefix
			for _, c := range tc.cidrs {
				cidrs = append(cidrs, netip.MustParsePrefix(c))
			}
			b, err := renderConflist(cidrs)
			if err != nil {
				t.Fatal(err)
			}
			var c parsedConflist
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if c.CNIVersion != "0.4.0" || c.Name != "nodenet" || len(c.Plugins) != 2 {
				t.Fatalf("cniVersion %q, name %q, %d plugins; want 0.4.0, nodenet, 2:\n%s", c.CNIVersion, c.Name, len(c.Plugins), b)
			}
			br, pm := c.Plugins[0], c.Plugins[1]
			if br.Type != "bridge" || br.Bridge != "cni0" {
				t.Errorf("first plugin %q on %q, want bridge on cni0", br.Type, br.Bridge)
			}
			for field, v := range map[string]struct {
				got  *bool
				want bool
			}{"isGateway": {br.IsGateway, true}, "ipMasq": {br.IPMasq, false}, "hairpinMode": {br.HairpinMode, true}} {
				if v.got == nil {
					t.Errorf("bridge %s unset, want %v", field, v.want)
				} else if *v.got != v.want {
					t.Errorf("bridge %s = %v, want %v", field, *v.got, v.want)
				}
			}
			if br.IPAM == nil || br.IPAM.Type != "host-local" {
				t.Fatalf("bridge ipam = %+v, want host-local", br.IPAM)
			}
			var subnets, routes []string
			for _, set := range br.IPAM.Ranges {
				if len(set) != 1 {
					t.Errorf("range set %+v, want one range per pod CIDR", set)
				}
				for _, r := range set {
					subnets = append(subnets, r.Subnet)
				}
			}
			for _, r := range br.IPAM.Routes {
				routes = append(routes, r.Dst)
			}
			if diff := cmp.Diff(tc.wantSubnets, subnets); diff != "" {
				t.Errorf("subnets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRoutes, routes); diff != "" {
				t.Errorf("routes (-want +got):\n%s", diff)
			}
			if pm.Type != "portmap" || !pm.Capabilities["portMappings"] {
				t.Errorf("second plugin %q with capabilities %v, want portmap with portMappings", pm.Type, pm.Capabilities)
			}
		})
	}
}

func TestRenderConflistNoCIDR(t *testing.T) {
	if b, err := renderConflist(nil); err == nil {
		t.Errorf("renderConflist(nil) = %s, want an error", b)
	}
	if b, err := renderConflist([]netip.Prefix{{}}); err == nil {
		t.Errorf("renderConflist(zero prefix) = %s, want an error", b)
	}
}

func TestWriteIfChanged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "10-nodenet.conflist")
	check := func(data string, wantChanged bool) {
		t.Helper()
		changed, err := writeIfChanged(path, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if changed != wantChanged {
			t.Errorf("writing %q: changed = %v, want %v", data, changed, wantChanged)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != data {
			t.Errorf("file holds %q, want %q", got, data)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want 0644", fi.Mode())
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 {
			t.Errorf("directory holds %v, want the config alone (no temporary files)", entries)
		}
	}
	check("one", true)
	before, _ := os.Stat(path)
	check("one", false)
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) {
		t.Error("unchanged content was rewritten (the file was replaced)")
	}
	check("two, longer", true)
	check("x", true)
}

func TestWriteIfChangedMissingDir(t *testing.T) {
	if _, err := writeIfChanged(filepath.Join(t.TempDir(), "nope", "x.conflist"), []byte("x")); err == nil {
		t.Error("want an error for a missing directory")
	}
}
