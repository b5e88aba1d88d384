package noderun

import (
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
