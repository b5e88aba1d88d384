package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mlkube/mlkube/internal/loadgen"
)

// TestObjectRowsAreSeededAndCleanedUp: the object API's rows read objects stored through it on
// the node they name, one object a PUT client, and everything they store is deleted after; they
// run only at the settings marked for them.
func TestObjectRowsAreSeededAndCleanedUp(t *testing.T) {
	w := where{ns: "ns", bare: "10.0.0.1", relay: "relay.ns.svc", node: "a", other: "b"}
	plan := loadgen.Plan{Rows: rowsOf(setting{4096, 16, true}, w, time.Second)}
	addObjectSeeds(&plan, plan.Rows, w.ns)
	objects := agentURL + "/v1/objects/ns/bench/"
	var got []string
	for _, r := range plan.Rows {
		if strings.HasPrefix(r.Name, "obj-") || r.Name == "bare-store" {
			got = append(got, r.Name+" "+r.Method+" "+r.URL)
		}
	}
	want := []string{
		"bare-store STORE http://10.0.0.1:8080/store/4096/{client}",
		"obj-put STORE " + objects + "put/4096/{client}?node=a",
		"obj-get GET " + objects + "get/4096?node=a",
		"obj-get-fwd GET " + objects + "remote/4096?node=b",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("object rows (-want +got):\n%s", diff)
	}
	wantSeeds := []loadgen.Seed{{URL: objects + "get/4096?node=a", Size: 4096}, {URL: objects + "remote/4096?node=b", Size: 4096}}
	if diff := cmp.Diff(wantSeeds, plan.Seeds); diff != "" {
		t.Errorf("seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{objects + "?recursive=true"}, plan.Cleanup); diff != "" {
		t.Errorf("cleanup (-want +got):\n%s", diff)
	}

	for _, r := range rowsOf(setting{4096, 1, false}, w, time.Second) {
		if strings.HasPrefix(r.Name, "obj-") || r.Method == loadgen.MethodStore {
			t.Errorf("a setting without the object API has row %s", r.Name)
		}
	}
}
