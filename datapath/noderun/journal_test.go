package noderun

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJournalLines(t *testing.T) {
	type record struct {
		kind   byte
		object string
		ok     bool
	}
	for _, object := range []string{"raw/a.jpg", "new\nline \"quoted\" é", ""} {
		got := record{}
		got.kind, got.object, got.ok = parseJournalLine(string(journalLine('d', object)))
		if diff := cmp.Diff(record{'d', object, true}, got, cmp.AllowUnexported(record{})); diff != "" {
			t.Errorf("%q round trip (-want +got):\n%s", object, diff)
		}
	}
	for _, line := range []string{"", "d", `d "cut`, `x "a"`, `d"a"`, `i  "a"`} {
		if _, _, ok := parseJournalLine(line); ok {
			t.Errorf("%q parsed", line)
		}
	}
}

// TestJournalHoldsNoNamesOfItsAttempt: an attempt's journal holds the
// names an earlier attempt completed, to skip them, and none of those it
// completes itself (the feed gives each object once): a run over a prefix
// of many objects holds none of their names while it goes.
func TestJournalHoldsNoNamesOfItsAttempt(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := root.Mkdir("out", 0o755); err != nil {
		t.Fatal(err)
	}
	j, _, err := openJournal(root, ".journal")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * journalBatch
	for i := range n {
		if err := j.complete(fmt.Sprint("raw/", i), "out"); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.flush(); err != nil {
		t.Fatal(err)
	}
	if len(j.done) != 0 {
		t.Errorf("the journal holds %d names of its own attempt", len(j.done))
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	resumed, existed, err := openJournal(root, ".journal")
	if err != nil || !existed {
		t.Fatalf("reopening: %v, existed %v", err, existed)
	}
	defer resumed.close()
	if !resumed.has("raw/0") || !resumed.has(fmt.Sprint("raw/", n-1)) || resumed.has("raw/x") {
		t.Errorf("the resumed journal does not skip what the earlier attempt did")
	}
}
