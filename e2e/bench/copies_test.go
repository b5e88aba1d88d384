package bench

import (
	"strings"
	"testing"
	"time"
)

func TestCopyTableComparesTheToolsSetBySetAndWay(t *testing.T) {
	got := copyTable([]copyResult{
		{Set: "20 × 64 KiB files", Tool: toolEtl, In: true, Bytes: 200e6, Elapsed: time.Second},
		{Set: "20 × 64 KiB files", Tool: toolEtl, In: false, Bytes: 300e6, Elapsed: 2 * time.Second},
		{Set: "20 × 64 KiB files", Tool: toolKubectl, In: true, Bytes: 200e6, Elapsed: 2 * time.Second},
		{Set: "20 × 64 KiB files", Tool: toolKubectl, In: false, Bytes: 300e6, Elapsed: time.Second},
		{Set: "1 × 8 MiB file", Tool: toolEtl, In: true, Bytes: 8e6, Elapsed: time.Second},
	})
	for _, want := range []string{
		"| data | direction | kubectl etl cp | kubectl cp | etl / kubectl |",
		"| 20 × 64 KiB files | in | 200 | 100 | 2.00x |\n| 20 × 64 KiB files | out | 150 | 300 | 0.50x |\n",
		// A tool that did not run leaves its cells and the ratio empty.
		"| 1 × 8 MiB file | in | 8 |  |  |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	for set, want := range map[copySet]string{
		{"files", 1000, 1 << 20}: "1000 × 1 MiB files",
		{"big", 1, 1 << 30}:      "1 × 1 GiB file",
		{"files", 20, 64 << 10}:  "20 × 64 KiB files",
	} {
		if got := set.String(); got != want {
			t.Errorf("set %+v is %q, want %q", set, got, want)
		}
	}
}
