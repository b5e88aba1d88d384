package noderun

import (
	"path"
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

func TestTempNames(t *testing.T) {
	cases := map[string]struct{ final, want string }{
		"nested":    {"out/x/y.jpg", "out/x/.y.jpg.u1.tmp"},
		"top level": {"y", ".y.u1.tmp"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tempName(tc.final, "u1")
			if got != tc.want {
				t.Errorf("tempName(%q) = %q, want %q", tc.final, got, tc.want)
			}
			if base := path.Base(got); !isTempOf(base, "u1") || isTempOf(base, "u2") {
				t.Errorf("isTempOf(%q) does not recognize it as u1's only", base)
			}
		})
	}
	if isTempOf("y.u1.tmp", "u1") {
		t.Error("a name that is not hidden is a result, never a temporary file")
	}
}
