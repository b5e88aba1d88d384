package agent

import (
	"net/url"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/api/wire"
)

// FuzzParseListQuery checks, on arbitrary query strings, that a list query that parses has a
// limit from 1 to wire.MaxListLimit and bounded strings, that it encodes to a query that parses
// back to itself (what a forwarding agent sends its peers), and that grouping a name under it
// yields a key that starts with the prefix and is no longer than the name.
func FuzzParseListQuery(f *testing.F) {
	for _, seed := range []string{
		"", "limit=10", "limit=0", "limit=-1", "limit=99999", "limit=x",
		"prefix=a/&delimiter=/&after=a/b", "prefix=%zz", "delimiter=" + strings.Repeat("d", wire.MaxObjectName+1),
	} {
		f.Add(seed, "a/b/c")
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := parseListQuery(v)
		if err != nil {
			if !strings.Contains(err.Error(), "=") {
				t.Fatalf("%q: the refusal %q names no parameter", raw, err)
			}
			return
		}
		if q.limit < 1 || q.limit > wire.MaxListLimit {
			t.Fatalf("%q: limit %d", raw, q.limit)
		}
		back, err := url.ParseQuery(q.encode())
		if err != nil {
			t.Fatal(err)
		}
		if again, err := parseListQuery(back); err != nil || again != q {
			t.Fatalf("%q: %+v encodes to %q, which parses to %+v, %v", raw, q, q.encode(), again, err)
		}
		if !strings.HasPrefix(name, q.prefix) {
			return
		}
		key, _ := q.key(name)
		if !strings.HasPrefix(key, q.prefix) || len(key) > len(name) {
			t.Fatalf("%q: %q groups under %q", raw, name, key)
		}
	})
}
