package kind

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/yaml"
)

func TestClusterConfig(t *testing.T) {
	cfg := clusterConfig(2)
	var roles []v1alpha4.NodeRole
	for _, n := range cfg.Nodes {
		roles = append(roles, n.Role)
	}
	want := []v1alpha4.NodeRole{v1alpha4.ControlPlaneRole, v1alpha4.WorkerRole, v1alpha4.WorkerRole}
	if diff := cmp.Diff(want, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if cfg.Kind != "Cluster" || cfg.APIVersion != "kind.x-k8s.io/v1alpha4" {
		t.Errorf("type = %s %s", cfg.APIVersion, cfg.Kind)
	}
	// kubeadm applies the patch to every node's kubelet: it must be a KubeletConfiguration of
	// the version kubeadm takes, turning failCgroupV1 off.
	var kubelet struct {
		Kind, APIVersion string
		FailCgroupV1     *bool `json:"failCgroupV1"`
	}
	if len(cfg.KubeadmConfigPatches) != 1 {
		t.Fatalf("patches %q, want the kubelet's cgroup v1 setting", cfg.KubeadmConfigPatches)
	}
	if err := yaml.Unmarshal([]byte(cfg.KubeadmConfigPatches[0]), &kubelet); err != nil {
		t.Fatal(err)
	}
	if kubelet.Kind != "KubeletConfiguration" || kubelet.APIVersion != "kubelet.config.k8s.io/v1beta1" ||
		kubelet.FailCgroupV1 == nil || *kubelet.FailCgroupV1 {
		t.Errorf("kubelet patch %+v, want KubeletConfiguration v1beta1 with failCgroupV1: false", kubelet)
	}
}

// TestLoadArchivesIntoEveryNode drives kind's own loader through fake nodes: each node must be
// asked to import each archive's exact bytes into containerd's k8s.io namespace.
func TestLoadArchivesIntoEveryNode(t *testing.T) {
	dir := t.TempDir()
	var tarballs []string
	for _, name := range []string{"a.tar", "b.tar"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("archive "+name), 0o644); err != nil {
			t.Fatal(err)
		}
		tarballs = append(tarballs, p)
	}
	fakes := []*fakeNode{{name: "mlkube-e2e-control-plane"}, {name: "mlkube-e2e-worker"}, {name: "mlkube-e2e-worker2"}}
	var ns []nodes.Node
	for _, f := range fakes {
		ns = append(ns, f)
	}
	if err := loadArchives(ns, tarballs); err != nil {
		t.Fatal(err)
	}
	for _, f := range fakes {
		if diff := cmp.Diff([]string{"archive a.tar", "archive b.tar"}, f.imported); diff != "" {
			t.Errorf("%s imported (-want +got):\n%s", f.name, diff)
		}
		for _, args := range f.importArgs {
			if !strings.Contains(args, "--namespace=k8s.io") || !strings.Contains(args, "--snapshotter=overlayfs") {
				t.Errorf("%s: import command %q", f.name, args)
			}
		}
	}
}

func TestLoadArchivesErrors(t *testing.T) {
	good := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(good, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		node    *fakeNode
		tarball string
	}{
		"missing tarball":   {node: &fakeNode{name: "n"}, tarball: good + ".missing"},
		"import fails":      {node: &fakeNode{name: "n", failImport: true}, tarball: good},
		"no containerd cfg": {node: &fakeNode{name: "n", failDump: true}, tarball: good},
	} {
		t.Run(name, func(t *testing.T) {
			if err := loadArchives([]nodes.Node{tc.node}, []string{tc.tarball}); err == nil {
				t.Error("want an error")
			}
		})
	}
}

// fakeNode is a kind node that answers `containerd config dump` and records `ctr images import`.
type fakeNode struct {
	name                 string
	failImport, failDump bool
	imported             []string
	importArgs           []string
}

func (n *fakeNode) String() string              { return n.name }
func (n *fakeNode) Role() (string, error)       { return "worker", nil }
func (n *fakeNode) IP() (string, string, error) { return "", "", nil }
func (n *fakeNode) SerialLogs(io.Writer) error  { return nil }
func (n *fakeNode) Command(name string, args ...string) exec.Cmd {
	return &fakeCmd{node: n, argv: append([]string{name}, args...)}
}
func (n *fakeNode) CommandContext(_ context.Context, name string, args ...string) exec.Cmd {
	return n.Command(name, args...)
}

// containerdDump is what `containerd config dump` prints on a kind node (config version 2).
const containerdDump = `version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "overlayfs"
`

type fakeCmd struct {
	node   *fakeNode
	argv   []string
	stdin  io.Reader
	stdout io.Writer
}

func (c *fakeCmd) SetEnv(...string) exec.Cmd      { return c }
func (c *fakeCmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *fakeCmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *fakeCmd) SetStderr(io.Writer) exec.Cmd   { return c }

func (c *fakeCmd) Run() error {
	line := strings.Join(c.argv, " ")
	switch {
	case line == "containerd config dump":
		if c.node.failDump {
			return errors.New("containerd: not found")
		}
		_, err := io.WriteString(c.stdout, containerdDump)
		return err
	case strings.HasPrefix(line, "ctr ") && strings.Contains(line, " images import "):
		if c.node.failImport {
			return errors.New("ctr: import failed")
		}
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, c.stdin); err != nil {
			return err
		}
		c.node.imported = append(c.node.imported, buf.String())
		c.node.importArgs = append(c.node.importArgs, line)
		return nil
	}
	return errors.New("unexpected command: " + line)
}

// TestClusterNamePerCheckout: one checkout always finds its own cluster; two checkouts never share
// one; every name is one kind accepts and leaves node names that are host names.
func TestClusterNamePerCheckout(t *testing.T) {
	a, b := clusterName("/check/work/main/_output/cluster"), clusterName("/tmp/ci/_output/cluster")
	if a == b {
		t.Errorf("two checkouts share cluster %s", a)
	}
	if again := clusterName("/check/work/main/_output/cluster"); again != a {
		t.Errorf("the same checkout got %s then %s", a, again)
	}
	valid := regexp.MustCompile(`^[a-z0-9.-]+$`) // kind's rule for cluster names
	for _, name := range []string{a, b, clusterName("relative/state")} {
		if !valid.MatchString(name) || !strings.HasPrefix(name, clusterPrefix) {
			t.Errorf("cluster name %q: want %s and [a-z0-9.-]", name, clusterPrefix)
		}
		if n := len(name + "-control-plane"); n > 63 {
			t.Errorf("node %s-control-plane is %d characters, more than a host name takes", name, n)
		}
	}
}

// fakeEngine lists the nodes it holds and deletes them all when asked.
type fakeEngine struct {
	nodes           map[string][]nodes.Node
	listErr, delErr error
	deleted         []string
}

func (e *fakeEngine) ListNodes(name string) ([]nodes.Node, error) { return e.nodes[name], e.listErr }
func (e *fakeEngine) Delete(name, _ string) error {
	if e.delErr != nil {
		return e.delErr
	}
	e.deleted = append(e.deleted, name)
	delete(e.nodes, name)
	return nil
}

func TestRemoveLeftovers(t *testing.T) {
	left := []nodes.Node{&fakeNode{name: "mine-control-plane"}, &fakeNode{name: "mine-worker"}}
	other := []nodes.Node{&fakeNode{name: "theirs-control-plane"}}
	for name, tc := range map[string]struct {
		engine      *fakeEngine
		wantDeleted []string
		wantLog     string
		wantErr     string
	}{
		"nothing left": {engine: &fakeEngine{nodes: map[string][]nodes.Node{"theirs": other}}},
		"nodes left by this checkout": {
			engine:      &fakeEngine{nodes: map[string][]nodes.Node{"mine": left, "theirs": other}},
			wantDeleted: []string{"mine"},
			wantLog:     "kind: deleting the 2 node(s) of cluster mine that an interrupted run of this checkout left\n",
		},
		"engine cannot list": {
			engine:  &fakeEngine{listErr: errors.New("cannot connect")},
			wantErr: "listing the nodes of kind cluster mine: cannot connect",
		},
		"engine cannot delete": {
			engine:  &fakeEngine{nodes: map[string][]nodes.Node{"mine": left}, delErr: errors.New("busy")},
			wantLog: "kind: deleting the 2 node(s) of cluster mine that an interrupted run of this checkout left\n",
			wantErr: "deleting the nodes an interrupted run left in kind cluster mine: busy",
		},
	} {
		t.Run(name, func(t *testing.T) {
			var log bytes.Buffer
			err := removeLeftovers(tc.engine, "mine", "kubeconfig", &log)
			if got := fmt.Sprint(err); (err != nil || tc.wantErr != "") && got != tc.wantErr {
				t.Errorf("error %q, want %q", got, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantDeleted, tc.engine.deleted); diff != "" {
				t.Errorf("deleted (-want +got):\n%s", diff)
			}
			if log.String() != tc.wantLog {
				t.Errorf("log %q, want %q", log.String(), tc.wantLog)
			}
		})
	}
}
