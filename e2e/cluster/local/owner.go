package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// ownerFile names the state directory of the machine's local cluster. The bridge, namespaces,
// cgroups and runtime directory have fixed names, so clusters of two checkouts (a developer's and
// a CI clone's) cannot run at once, and one's teardown must not wreck the other.
const ownerFile = "/run/mlkube.owner"

func readOwner() (string, error) {
	b, err := os.ReadFile(ownerFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return strings.TrimSpace(string(b)), err
}

// settleOwner makes sure the machine-wide names are c's to clear: it refuses while another
// checkout's cluster runs, and clears one whose processes are gone.
func (c *Cluster) settleOwner(ctx context.Context) error {
	owner, err := readOwner()
	if err != nil || owner == "" || owner == c.layout.State {
		return err
	}
	other := &Cluster{root: c.root, plan: c.plan, layout: layout{State: owner, Run: c.layout.Run}, logf: c.logf}
	running, err := other.running()
	if err != nil {
		return err
	}
	if running {
		return fmt.Errorf("the local cluster of %s is running; bring it down from there first", owner)
	}
	if err := other.teardown(ctx); err != nil {
		return fmt.Errorf("clearing the dead cluster of %s: %w", owner, err)
	}
	return nil
}

// running reports whether any process c started is alive.
func (c *Cluster) running() (bool, error) {
	recs, err := readPIDRecords(c.layout)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if alive(r.PID, r.Bin) {
			return true, nil
		}
	}
	return false, nil
}

func (c *Cluster) claimOwner() error {
	return os.WriteFile(ownerFile, []byte(c.layout.State+"\n"), 0o644)
}

// releaseOwner removes the owner file if it names c.
func (c *Cluster) releaseOwner() error {
	owner, err := readOwner()
	if err != nil || owner != c.layout.State {
		return err
	}
	return os.Remove(ownerFile)
}
