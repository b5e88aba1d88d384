// Command coredns is CoreDNS's own server (coremain, as its main package runs it) with only the
// plugins the e2e clusters' Corefiles use: kubeadm's default Corefile on kind, and the local
// cluster's (e2e/cluster/local/coredns.go), plus log for debugging one. CoreDNS's main links every
// plugin it ships, cloud DNS providers' SDKs among them: twice the packages, and minutes of a cold
// build, for plugins no Corefile here names. A Corefile that names another fails to load with
// CoreDNS's "no action found for directive 'NAME' ... (missing a plugin?)".
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics" // the prometheus directive
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() { coremain.Run() }
