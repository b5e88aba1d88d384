package bench

import (
	"strings"
	"testing"
)

func TestPyTableComparesEachRowWithItsBaselineRoundByRound(t *testing.T) {
	out := strings.Join([]string{
		`{"row": "py-open", "size": 4096, "workers": 0, "round": 0, "objects": 1000, "seconds": 0.1}`,
		`{"row": "py-http", "size": 4096, "workers": 0, "round": 0, "objects": 1000, "seconds": 0.4}`,
		`{"row": "py-agent", "size": 4096, "workers": 0, "round": 0, "objects": 1000, "seconds": 0.2}`,
		`{"row": "py-md5-loader", "size": 4096, "workers": 0, "round": 0, "objects": 1000, "seconds": 0.4}`,
		`{"row": "py-md5-node", "size": 4096, "workers": 0, "round": 0, "objects": 1000, "seconds": 0.2}`,
		"/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:554: UserWarning: ...",
		`{"row": "py-open", "size": 4096, "workers": 0, "round": 1, "objects": 1000, "seconds": 0.1}`,
		`{"row": "py-agent", "size": 4096, "workers": 0, "round": 1, "objects": 1000, "seconds": 0.125}`,
		`{"row": "py-open", "size": 1048576, "workers": 4, "round": 0, "objects": 100, "seconds": 0.5}`,
		`{"row": "py-agent", "size": 1048576, "workers": 4, "round": 0, "objects": 100, "seconds": 1}`,
	}, "\n")
	results, err := parsePy(out)
	if err != nil {
		t.Fatal(err)
	}
	got := pyTable(results)
	for _, want := range []string{
		// Rounds 0.5x and 0.8x: the median of two is their mean.
		"| 4 KiB | 0 | 10000 (10000–10000) | 2500 | 6500 (5000–8000) | 0.65x (0.50–0.80x) | 2.00x | 2500 | 5000 | 2.00x |",
		// 1 MiB rows in MB/s: 100 MiB in 0.5 s.
		"| 1 MiB | 4 | 210 |  | 105 | 0.50x |  |  |  |  |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestParsePyRefusesARowThatReadNothing(t *testing.T) {
	for _, out := range []string{
		"Traceback (most recent call last):\n  RuntimeError: 3 objects read of 4\n",
		`{"row": "py-agent", "size": 4096, "workers": 0, "round": 0, "objects": 0, "seconds": 0.1}`,
		`{"row": "py-agent", "size": 4096,`,
	} {
		if _, err := parsePy(out); err == nil {
			t.Errorf("parsePy(%q) = nil error", out)
		}
	}
}
