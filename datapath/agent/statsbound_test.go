package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// TestStatsReportFitsTheManager: Transforms whose error rings are full of
// the longest records, in characters JSON escapes six bytes each, would
// make a report of tens of MiB, which the manager drops whole (it reads 8
// MiB of an agent's answer). The report stays within maxStatsReport, with
// every Transform's counters and its newest errors.
func TestStatsReportFitsTheManager(t *testing.T) {
	const transforms = 16
	r := recorder{node: testNode}
	long := strings.Repeat("<", etlv1alpha1.MaxObjectErrorText)
	for i := range transforms {
		for j := range etlv1alpha1.MaxObjectErrors {
			r.observe(fmt.Sprint("ns/t", i), 1, 0, fmt.Sprint(j, long), 502, long, time.Unix(int64(j), 0))
		}
	}
	rep := r.report()
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > maxStatsReport {
		t.Errorf("the report is %d bytes, over %d", len(data), maxStatsReport)
	}
	if len(rep.Transforms) != transforms {
		t.Fatalf("%d Transforms reported, want %d", len(rep.Transforms), transforms)
	}
	for key, ts := range rep.Transforms {
		n := len(ts.Errors)
		if ts.Counters.Errors != etlv1alpha1.MaxObjectErrors || n == 0 || !strings.HasPrefix(ts.Errors[n-1].Object, fmt.Sprint(etlv1alpha1.MaxObjectErrors-1)) {
			t.Errorf("%s: %d errors counted, %d reported; want %d counted and the newest reported", key, ts.Counters.Errors, n, etlv1alpha1.MaxObjectErrors)
		}
	}
}

// TestStatsRecordsBounded: past its bound of records, the recorder
// forgets the Transform that went longest without an object, and its
// metrics series with it.
func TestStatsRecordsBounded(t *testing.T) {
	m := newMetrics()
	r := recorder{node: testNode, max: 3, forget: m.forget}
	for i, key := range []string{"ns/a", "ns/b", "ns/c", "ns/b", "ns/d", "ns/e"} {
		r.observe(key, 1, 1, "o", 0, "", time.Unix(int64(i), 0))
		m.observe(key, "hpush", 1, 1, time.Millisecond, 0)
	}
	var got []string
	for key := range r.report().Transforms {
		got = append(got, key)
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[ns/b ns/d ns/e]" {
		t.Errorf("the recorder keeps %v, want the 3 most recent: [ns/b ns/d ns/e]", got)
	}
	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, s := range f.GetMetric() {
			for _, l := range s.GetLabel() {
				if l.GetName() == "transform" && (l.GetValue() == "ns/a" || l.GetValue() == "ns/c") {
					t.Errorf("%s keeps a series of forgotten %s", f.GetName(), l.GetValue())
				}
			}
		}
	}
}
