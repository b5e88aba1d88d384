package suite

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// fetchAnonymously is fetchFrom without the pod's data path token.
func fetchAnonymously(t *testing.T, ns, pod, u string) (int, string) {
	t.Helper()
	return proxyResult(clientset.CoreV1().RESTClient().Get().Namespace(ns).Resource("pods").Name(pod+":8080").
		SubResource("proxy").Suffix("fetch").Param("url", u).Param("token", "none").Do(context.Background()))
}

// TestDataPathAccessFollowsRBAC: a pod of namespace B with no RoleBinding in A can neither run
// A's Transform nor read A's data through the node agent (403), a pod with no token is refused
// (401), and B's pod succeeds once A binds it; ?src= towards the API server or the agent itself is
// refused. Node runs are the manager's alone.
func TestDataPathAccessFollowsRBAC(t *testing.T) {
	node, nsA, clientA, tr := md5OnANode(t, v1alpha1.CommHPush)
	data := []byte("team a's private bytes")
	putObjects(t, nsA, node, map[string][]byte{"private.txt": data})
	u := transformURL(nsA, tr.Name, "private.txt")
	want := md5hex(data)
	if code, body := fetchFrom(t, nsA, clientA, u); code != 200 || strings.TrimSpace(body) != want {
		t.Fatalf("namespace %s's own client: %d %q, want 200 %s", nsA, code, body, want)
	}

	nsB := bareNamespace(t)
	clientB := clientOn(t, nsB, node)
	if code, body := fetchAnonymously(t, nsB, clientB, u); code != 401 || !strings.Contains(body, "token") {
		t.Errorf("no token: %d %q, want 401 saying how to get one", code, body)
	}
	for name, u := range map[string]string{
		"A's object":                       u,
		"A's Transform":                    transformURL(nsA, tr.Name, "x") + "?src=" + agentURL + "/healthz",
		"a node's share of a TransformRun": agentURL + wire.NodeRunsPath + nsA + "/run",
		"the agents' stats":                agentURL + wire.StatsPath,
	} {
		if code, body := fetchFrom(t, nsB, clientB, u); code != 403 || strings.Contains(body, want) {
			t.Errorf("%s from namespace %s without a binding: %d %q, want 403", name, nsB, code, body)
		}
	}

	bindDataPath(t, nsA, nsB)
	// A refusal is cached for 10 s (docs/datapath-rbac.md): poll until the binding counts.
	k8s.Eventually(t, "namespace "+nsB+"'s client to be let in after the binding", func(context.Context) (bool, error) {
		code, body := fetchFrom(t, nsB, clientB, u)
		switch {
		case code == 200 && strings.TrimSpace(body) == want:
			return true, nil
		case code == 403:
			return false, nil
		}
		return false, kubetest.Stop(fmt.Errorf("got %d %q, want 403 then 200 %s", code, body, want))
	})

	// ?src= is off unless the operator allows hosts; the API server and the agent are refused.
	for _, src := range []string{"https://kubernetes.default.svc/api", agentURL + wire.StatsPath} {
		if code, body := fetchFrom(t, nsA, clientA, transformURL(nsA, tr.Name, "x")+"?src="+src); code != 403 {
			t.Errorf("?src=%s: %d %q, want 403", src, code, body)
		}
	}
}

// TestDataPathStatusSurvivesAFloodOfLongNames: 128 failed objects with names of the longest size
// allowed (wire.MaxObjectName) leave the Transform's status within its bounds and still
// written: a good object afterwards is counted.
func TestDataPathStatusSurvivesAFloodOfLongNames(t *testing.T) {
	node, ns, client, tr := md5OnANode(t, v1alpha1.CommHPush)
	var wg sync.WaitGroup
	work := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				name := fmt.Sprintf("%04d-", i) + strings.Repeat("n", wire.MaxObjectName-5)
				if code, body := fetchFrom(t, ns, client, transformURL(ns, tr.Name, name)); code != 404 {
					t.Errorf("missing object %d: %d %.200q, want 404", i, code, body)
				}
			}
		})
	}
	for i := range 128 {
		work <- i
	}
	close(work)
	wg.Wait()
	putObjects(t, ns, node, map[string][]byte{"good": []byte("good")})
	if code, body := fetchFrom(t, ns, client, transformURL(ns, tr.Name, "good")); code != 200 || strings.TrimSpace(body) != md5hex([]byte("good")) {
		t.Fatalf("a good object after the flood: %d %q", code, body)
	}
	kubetest.WaitFor(t, k8s, "the flood and the good object counted in status", tr, func(got *v1alpha1.Transform) (bool, error) {
		if n := len(got.Status.Errors); n > v1alpha1.MaxObjectErrors {
			return false, kubetest.Stop(fmt.Errorf("status holds %d errors, over %d", n, v1alpha1.MaxObjectErrors))
		}
		for _, e := range got.Status.Errors {
			if len(e.Object) > wire.MaxObjectName || len(e.Message) > v1alpha1.MaxObjectErrorText {
				return false, kubetest.Stop(fmt.Errorf("an error of %d+%d bytes in status", len(e.Object), len(e.Message)))
			}
		}
		return got.Status.Totals.Errors >= 128 && got.Status.Totals.Objects >= 129, nil
	})
}
