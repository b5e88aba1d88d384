package placement

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRankDeterministic(t *testing.T) {
	nodes := []string{"n1", "n2", "n3"}
	first := Rank("ns", "obj", nodes)
	for range 10 {
		if diff := cmp.Diff(first, Rank("ns", "obj", []string{"n3", "n1", "n2"})); diff != "" {
			t.Fatalf("Rank depends on the order of nodes (-first +now):\n%s", diff)
		}
	}
	if !slices.Equal(nodes, []string{"n1", "n2", "n3"}) {
		t.Errorf("Rank changed its argument: %v", nodes)
	}
	if got := Rank("ns", "obj", nil); len(got) != 0 {
		t.Errorf("Rank over no nodes = %v", got)
	}
}

func TestRankSpreads(t *testing.T) {
	counts := map[string]int{}
	for i := range 1000 {
		counts[Rank("ns", fmt.Sprintf("shard-%04d.tar", i), []string{"node-a", "node-b"})[0]]++
	}
	for node, n := range counts {
		if n < 300 || n > 700 {
			t.Errorf("%s holds %d of 1000 objects, want 300–700: %v", node, n, counts)
		}
	}
}

func TestRankRemovingANodeMovesOnlyItsObjects(t *testing.T) {
	all := []string{"a", "b", "c", "d"}
	without := []string{"a", "b", "d"}
	for i := range 1000 {
		name := fmt.Sprintf("obj-%d", i)
		before, after := Rank("ns", name, all)[0], Rank("ns", name, without)[0]
		if before != "c" && before != after {
			t.Errorf("%s moved from %s to %s though c left", name, before, after)
		}
	}
}

func TestRankNamespaceMatters(t *testing.T) {
	nodes := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	same := 0
	for i := range 200 {
		name := fmt.Sprint(i)
		if Rank("x", name, nodes)[0] == Rank("y", name, nodes)[0] {
			same++
		}
	}
	if same > 80 {
		t.Errorf("%d of 200 names land on the same node in two namespaces: the namespace is not hashed", same)
	}
}

// TestFirstIsRanksFirst: First, which a run uses to keep its share of a store's objects, names
// the node Rank puts first, the one the object API stores the object on.
func TestFirstIsRanksFirst(t *testing.T) {
	nodes := []string{"n-a", "n-b", "n-c", "n-d", "n-e"}
	for i := range 2000 {
		name := fmt.Sprintf("out/shard-%04d.tar", i)
		if got, want := First("team", name, nodes), Rank("team", name, nodes)[0]; got != want {
			t.Fatalf("%s: First %s, Rank's first %s", name, got, want)
		}
	}
}
