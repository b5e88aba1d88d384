package bench

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A pyResult is one line of the in-pod benchmark (e2e/images/torch-trainer/bench.py): one row
// reading every object of a set once, through a DataLoader of Workers workers, in one round.
type pyResult struct {
	Row     string  `json:"row"`
	Size    int     `json:"size"`
	Workers int     `json:"workers"`
	Round   int     `json:"round"`
	Objects int     `json:"objects"`
	Seconds float64 `json:"seconds"`
}

// The rows of bench.py, and the pairs the table compares: each row against the baseline that
// does the same work without mlkube in the same pod.
const (
	pyOpen       = "py-open"
	pyHTTP       = "py-http"
	pyAgent      = "py-agent"
	pyMD5Loader  = "py-md5-loader"
	pyMD5OnNode  = "py-md5-node"
	pyLinePrefix = "{"
)

// parsePy reads bench.py's output: its JSON lines (Python's warnings go between them), each of a
// set that was read in full.
func parsePy(out string) ([]pyResult, error) {
	var results []pyResult
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, pyLinePrefix) {
			continue
		}
		var r pyResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			return nil, fmt.Errorf("bench.py line %q: %w", l, err)
		}
		if r.Objects == 0 || r.Seconds <= 0 {
			return nil, fmt.Errorf("bench.py line %q: no objects read", l)
		}
		results = append(results, r)
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("bench.py printed no result:\n%.4000s", out)
	}
	return results, nil
}

// pyTable renders the in-pod rows: for each object size and DataLoader workers, in the order
// they ran, the rate of each row (median of rounds and range) and each ratio to its baseline
// taken round by round.
func pyTable(results []pyResult) string {
	type key struct{ size, workers int }
	var order []key
	rates := map[key]map[string]map[int]float64{} // setting → row → round → rate
	for _, r := range results {
		k := key{r.Size, r.Workers}
		if rates[k] == nil {
			order = append(order, k)
			rates[k] = map[string]map[int]float64{}
		}
		if rates[k][r.Row] == nil {
			rates[k][r.Row] = map[int]float64{}
		}
		rate := float64(r.Objects) / r.Seconds
		if r.Size >= 1<<20 {
			rate *= float64(r.Size) / 1e6
		}
		rates[k][r.Row][r.Round] = rate
	}
	var b strings.Builder
	b.WriteString("\nIn a training pod: `mlkube.torch.ObjectIterableDataset` through the node's agent against `open()` of the same files " +
		"(a hostPath of the node's data root) and a GET each from a bare file server of them, and an md5 Transform on the node " +
		"against md5 in the DataLoader (objects/s at 4 KiB, MB/s of objects read at 1 MiB; median of rounds and range)\n\n")
	b.WriteString("| objects | DataLoader workers | open() | bare HTTP | through the agent | agent / open() | agent / bare HTTP | md5 in the DataLoader | md5 Transform on the node | node / DataLoader |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, k := range order {
		rs := rates[k]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", sizeName(k.size), k.workers,
			median(rs[pyOpen]), median(rs[pyHTTP]), median(rs[pyAgent]), ratio(rs[pyAgent], rs[pyOpen]), ratio(rs[pyAgent], rs[pyHTTP]),
			median(rs[pyMD5Loader]), median(rs[pyMD5OnNode]), ratio(rs[pyMD5OnNode], rs[pyMD5Loader]))
	}
	return b.String()
}

func median(byRound map[int]float64) string {
	if len(byRound) == 0 {
		return ""
	}
	return spread(values(byRound), "%.0f")
}

// ratio is row's rate over base's, round by round, as the median with the range.
func ratio(row, base map[int]float64) string {
	var rs []float64
	for round, rate := range row {
		if b, ok := base[round]; ok && b > 0 {
			rs = append(rs, rate/b)
		}
	}
	if len(rs) == 0 {
		return ""
	}
	return spread(rs, "%.2fx")
}
