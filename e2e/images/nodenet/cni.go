package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// The conflist is read by containerd's CRI plugin (go-cni/libcni) and run by the plugins Debian
// bookworm ships under /opt/cni/bin (containernetworking-plugins 1.1), which both speak CNI 0.4.0.
const cniVersion = "0.4.0"

type conflist struct {
	CNIVersion string `json:"cniVersion"`
	Name       string `json:"name"`
	Plugins    []any  `json:"plugins"`
}

type bridgePlugin struct {
	Type   string `json:"type"`
	Bridge string `json:"bridge"`
	// IsGateway gives the bridge the first address of each range, which the pods use as their
	// default gateway; the bridge plugin then also turns on IP forwarding, which the routes to the
	// other nodes' pods depend on.
	IsGateway bool `json:"isGateway"`
	// IPMasq is off: pod traffic to other nodes' pods must keep its source address so that replies
	// come back through the routes nodenet keeps; kube-proxy NATs what goes to Services.
	IPMasq bool `json:"ipMasq"`
	// HairpinMode lets a pod reach itself through a Service IP, which kube-proxy may DNAT straight
	// back to the pod's own bridge port.
	HairpinMode bool      `json:"hairpinMode"`
	IPAM        hostLocal `json:"ipam"`
}

type hostLocal struct {
	Type string `json:"type"`
	// Ranges holds one range set per pod CIDR, so a dual-stack pod gets one address of each family.
	Ranges [][]ipRange `json:"ranges"`
	Routes []cniRoute  `json:"routes"`
}

type ipRange struct {
	Subnet string `json:"subnet"`
}

type cniRoute struct {
	Dst string `json:"dst"`
}

type portmapPlugin struct {
	Type string `json:"type"`
	// Capabilities asks the runtime to pass the pod's hostPort mappings, which kubelet no longer
	// programs itself.
	Capabilities map[string]bool `json:"capabilities"`
}

// renderConflist returns the CNI network configuration of a node whose pod CIDRs are cidrs: a
// bridge "cni0" handing out addresses from each CIDR with a default route per address family, and
// portmap for hostPorts. The output is deterministic for a given input, so comparing it with the
// file on disk tells whether anything changed.
func renderConflist(cidrs []netip.Prefix) ([]byte, error) {
	if len(cidrs) == 0 {
		return nil, errors.New("no pod CIDR")
	}
	ipam := hostLocal{Type: "host-local"}
	var has4, has6 bool
	for _, c := range cidrs {
		if !c.IsValid() {
			return nil, fmt.Errorf("invalid pod CIDR %v", c)
		}
		ipam.Ranges = append(ipam.Ranges, []ipRange{{Subnet: c.Masked().String()}})
		if c.Addr().Is4() {
			has4 = true
		} else {
			has6 = true
		}
	}
	// A default route only for the families the pod has an address of: an IPv6 default route
	// without an IPv6 address would fail the ADD.
	if has4 {
		ipam.Routes = append(ipam.Routes, cniRoute{Dst: "0.0.0.0/0"})
	}
	if has6 {
		ipam.Routes = append(ipam.Routes, cniRoute{Dst: "::/0"})
	}
	conf := conflist{
		CNIVersion: cniVersion,
		Name:       "nodenet",
		Plugins: []any{
			bridgePlugin{Type: "bridge", Bridge: "cni0", IsGateway: true, IPMasq: false, HairpinMode: true, IPAM: ipam},
			portmapPlugin{Type: "portmap", Capabilities: map[string]bool{"portMappings": true}},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// writeIfChanged makes path hold data and reports whether it had to write. containerd watches the
// directory and loads any *.conf, *.conflist or *.json file it sees, so the data goes to a temporary
// file of another extension in the same directory first and is renamed over path only when whole:
// containerd never reads half a config. An unchanged file is not rewritten, so containerd is not
// made to reload for nothing.
func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return false, err
	}
	// CreateTemp makes the file 0600; containerd runs as root and would read it, but a config
	// that other tools (crictl, a person) cannot read only confuses.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return false, err
	}
	return true, nil
}
