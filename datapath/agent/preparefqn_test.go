package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/builders"
)

// TestPrepareFQNMakesTheNamespaceDirectory: the agent, not the kubelet, makes an fqn Transform's
// namespace directory, so that it belongs to the agent and PUTs into it work; other arguments
// leave the data root alone.
func TestPrepareFQNMakesTheNamespaceDirectory(t *testing.T) {
	e := newEnv(t)
	fqn := builders.Transform("md5").Namespace("team-a").Runtime("img").Obj()
	fqn.Spec.Argument = etlv1alpha1.ArgFQN
	bytesArg := builders.Transform("md5").Namespace("team-b").Runtime("img").Obj()
	for range 2 { // a second call finds the directory made
		for _, tr := range []*etlv1alpha1.Transform{fqn, bytesArg} {
			if err := e.agent.PrepareFQN(tr); err != nil {
				t.Fatalf("PrepareFQN(%s/%s): %v", tr.Namespace, tr.Name, err)
			}
		}
	}
	fi, err := os.Stat(filepath.Join(e.base, "team-a"))
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o755 {
		t.Fatalf("namespace directory of the fqn Transform: %v %v, want a directory of mode 0755", fi, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
		t.Errorf("namespace directory owned by %+v, want the agent's user %d", fi.Sys(), os.Geteuid())
	}
	if _, err := os.Stat(filepath.Join(e.base, "team-b")); !os.IsNotExist(err) {
		t.Errorf("a Transform of argument bytes made its namespace's directory: %v", err)
	}
}
