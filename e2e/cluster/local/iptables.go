package local

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// The host's iptables hold the host kube-proxy's KUBE-* chains (filter, nat, mangle; IPv6 too when
// the host has it). Node kube-proxies and kubelets need no cleanup: their chains go with the
// node's namespace. kube-proxy --cleanup is not enough: it leaves KUBE-FIREWALL behind.
var iptablesTools = []struct{ save, restore string }{
	{"iptables-save", "iptables-restore"},
	{"ip6tables-save", "ip6tables-restore"},
}

// hostKubeChains lists the host's KUBE-* chains as "<save>/<table>/<chain>".
func hostKubeChains() ([]string, error) {
	var chains []string
	for _, t := range iptablesTools {
		out, err := exec.Command(t.save).Output()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.save, err)
		}
		for table, cs := range kubeChains(string(out)) {
			for _, c := range cs {
				chains = append(chains, t.save+"/"+table+"/"+c)
			}
		}
	}
	return chains, nil
}

// removeHostKubeChains deletes every KUBE-* chain and every rule that jumps to one, and nothing
// else: the removal is applied with --noflush.
func removeHostKubeChains() error {
	for _, t := range iptablesTools {
		out, err := exec.Command(t.save).Output()
		if err != nil {
			return fmt.Errorf("%s: %w", t.save, err)
		}
		script := removalScript(string(out))
		if script == "" {
			continue
		}
		cmd := exec.Command(t.restore, "--noflush")
		cmd.Stdin = strings.NewReader(script)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s\n%s", t.restore, err, bytes.TrimSpace(b), script)
		}
	}
	return nil
}

// kubeChains picks the KUBE-* chain declarations (":KUBE-SERVICES - [0:0]") out of iptables-save
// output, by table.
func kubeChains(save string) map[string][]string {
	chains := map[string][]string{}
	table := ""
	for _, line := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table = line[1:]
		case strings.HasPrefix(line, ":KUBE-"):
			chain, _, _ := strings.Cut(line[1:], " ")
			chains[table] = append(chains[table], chain)
		}
	}
	return chains
}

// removalScript turns iptables-save output into an iptables-restore --noflush script that deletes
// the rules of other chains jumping to KUBE-* chains, then flushes every KUBE-* chain (they jump
// to each other), then deletes them. Empty when there is nothing to remove.
func removalScript(save string) string {
	chains := kubeChains(save)
	var b strings.Builder
	table := ""
	var jumps []string
	flush := func() {
		if table == "" || len(chains[table]) == 0 {
			return
		}
		fmt.Fprintf(&b, "*%s\n", table)
		for _, j := range jumps {
			fmt.Fprintln(&b, j)
		}
		for _, c := range chains[table] {
			fmt.Fprintf(&b, "-F %s\n", c)
		}
		for _, c := range chains[table] {
			fmt.Fprintf(&b, "-X %s\n", c)
		}
		fmt.Fprintln(&b, "COMMIT")
	}
	for _, line := range strings.Split(save, "\n") {
		switch {
		case strings.HasPrefix(line, "*"):
			table, jumps = line[1:], nil
		case line == "COMMIT":
			flush()
			table = ""
		case strings.HasPrefix(line, "-A ") && !strings.HasPrefix(line, "-A KUBE-") && strings.Contains(line, " -j KUBE-"):
			jumps = append(jumps, "-D "+strings.TrimPrefix(line, "-A "))
		}
	}
	return b.String()
}

// hostServiceRules reports whether the host's kube-proxy has programmed Services: the rule for
// the API server's own Service, which always exists, is in the host's nat table.
func hostServiceRules() (bool, error) {
	out, err := exec.Command("iptables-save", "-t", "nat").Output()
	if err != nil {
		return false, fmt.Errorf("iptables-save: %w", err)
	}
	if !strings.Contains(string(out), `"default/kubernetes:https`) {
		return false, errors.New("no rule for default/kubernetes yet")
	}
	return true, nil
}
