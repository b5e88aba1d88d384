package suite

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/kubetest"
)

const echoImage = "mlkube/transformer-echo:dev"

func readyNodes(t *testing.T) []string {
	t.Helper()
	out, err := fixture.ReadyNodes(context.Background(), k8s)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 2 {
		t.Fatalf("%d ready nodes; the e2e cluster must have at least 2", len(out))
	}
	return out
}

// pythonImage has Debian's python3.11: its interpreter serves as an io command. make e2e-release
// names the released image in MLKUBE_E2E_PYTHON_IMAGE, so that it too is pulled from its registry.
var pythonImage = cmp.Or(os.Getenv("MLKUBE_E2E_PYTHON_IMAGE"), "mlkube/runtime-python3.11:dev")

// ioMD5 reads an object on stdin and writes its md5, the io contract.
var ioMD5 = []string{"python3", "-c", "import sys, hashlib; sys.stdout.write(hashlib.md5(sys.stdin.buffer.read()).hexdigest())"}

func TestTransformOneReadyPodPerNodeForEachCommunication(t *testing.T) {
	nodes := readyNodes(t)
	for _, comm := range v1alpha1.Communications {
		t.Run(string(comm), func(t *testing.T) {
			ns := namespace(t)
			tr := builders.Transform("echo-" + string(comm)).Namespace(ns).Runtime(echoImage).Comm(comm).Obj()
			if comm == v1alpha1.CommIO {
				tr = builders.Transform("md5-io").Namespace(ns).Runtime(pythonImage, ioMD5...).Comm(comm).Obj()
			}
			k8s.MustCreate(t, tr)
			got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
			if want := fmt.Sprintf("%d/%d", len(nodes), len(nodes)); got.Status.NodesReady != want {
				t.Errorf("nodes ready %s; want %s", got.Status.NodesReady, want)
			}
			pods, err := k8s.Pods(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			on := map[string]bool{}
			for _, p := range pods {
				on[p.Spec.NodeName] = true
			}
			for _, n := range nodes {
				if !on[n] {
					t.Errorf("no transformer pod runs on node %s (pods on %v)", n, on)
				}
			}
			for _, n := range got.Status.Nodes {
				if !n.Ready || n.IP == "" || n.Port != 8000 {
					t.Errorf("node status %+v; want ready with the pod's IP and port 8000", n)
				}
			}
		})
	}
}

// dyingTransformer exits at once: the rendezvous workload without its DMLC environment exits 2.
func dyingTransformer(ns, name string) *v1alpha1.Transform {
	return builders.Transform(name).Namespace(ns).Runtime(builders.DefaultImage).Obj()
}

func TestTransformAbortsWhenItsTransformerDies(t *testing.T) {
	ns := namespace(t)
	tr := dyingTransformer(ns, "dies")
	k8s.MustCreate(t, tr)
	got := k8s.WaitForStage(t, tr, v1alpha1.StageAborted)
	if !strings.Contains(got.Status.Reason, "transformer container exited with code 2") {
		t.Errorf("reason %q does not say the transformer exited", got.Status.Reason)
	}
	k8s.WaitForPods(t, "the aborted Transform's pods deleted", tr, 0)
}

func TestTransformRestartReplacesItsTransformer(t *testing.T) {
	ns := namespace(t)
	tr := dyingTransformer(ns, "phoenix")
	tr.Spec.FailurePolicy = v1alpha1.FailureRestart
	k8s.MustCreate(t, tr)
	kubetest.WaitFor(t, k8s, "a transformer replaced after failing", tr, func(got *v1alpha1.Transform) (bool, error) {
		if got.Status.Stage == v1alpha1.StageAborted {
			return false, kubetest.Stop(fmt.Errorf("aborted under failurePolicy Restart: %s", got.Status.Reason))
		}
		for _, n := range got.Status.Nodes {
			if n.Restarts >= 1 {
				return true, nil
			}
		}
		return false, nil
	})
}

func TestTransformStopStartAndDelete(t *testing.T) {
	ctx := context.Background()
	ns := namespace(t)
	tr := builders.Transform("cycle").Namespace(ns).Runtime(echoImage).Obj()
	k8s.MustCreate(t, tr)
	k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	k8s.StopTransform(t, tr)
	k8s.StartTransform(t, tr)
	k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if err := k8s.Delete(ctx, tr); err != nil {
		t.Fatal(err)
	}
	k8s.WaitForPods(t, "every transformer pod gone with the Transform", tr, 0)
}

func TestTransformCodeFormRunsOnEveryNode(t *testing.T) {
	nodes := readyNodes(t)
	ns := namespace(t)
	tr := builders.Transform("upper").Namespace(ns).Code("python3.11", "def transform(data):\n    return data.upper()\n").Obj()
	k8s.MustCreate(t, tr)
	got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if want := fmt.Sprintf("%d/%d", len(nodes), len(nodes)); got.Status.NodesReady != want {
		t.Errorf("nodes ready %s; want %s", got.Status.NodesReady, want)
	}
}
