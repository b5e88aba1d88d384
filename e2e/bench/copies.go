package bench

import (
	"fmt"
	"strings"
	"time"
)

// A copyResult is one copy of a data set one way by one tool, its bytes checked at the other end.
type copyResult struct {
	// Set names the data set, e.g. "1000 × 1 MiB files".
	Set string
	// Tool is toolEtl or toolKubectl.
	Tool string
	// In is a copy into the cluster, out one back.
	In      bool
	Bytes   int64
	Elapsed time.Duration
}

const (
	toolEtl     = "kubectl etl cp"
	toolKubectl = "kubectl cp"
)

func (r copyResult) mbPerSecond() float64 { return float64(r.Bytes) / 1e6 / r.Elapsed.Seconds() }

// copyTable renders the copies as a markdown table: for each data set and direction, in the
// order they ran, the MB/s of both tools and the ratio of kubectl etl cp's to kubectl cp's.
func copyTable(results []copyResult) string {
	type key struct {
		set string
		in  bool
	}
	var order []key
	rates := map[key]map[string]float64{}
	for _, r := range results {
		k := key{r.Set, r.In}
		if rates[k] == nil {
			order = append(order, k)
			rates[k] = map[string]float64{}
		}
		rates[k][r.Tool] = r.mbPerSecond()
	}
	var b strings.Builder
	b.WriteString("\n`kubectl etl cp` against `kubectl cp` (MB/s, one copy each, bytes checked)\n\n")
	b.WriteString("| data | direction | " + toolEtl + " | " + toolKubectl + " | etl / kubectl |\n|---|---|---|---|---|\n")
	for _, k := range order {
		dir := "out"
		if k.in {
			dir = "in"
		}
		etl, okE := rates[k][toolEtl]
		kc, okK := rates[k][toolKubectl]
		ratio := ""
		if okE && okK && kc > 0 {
			ratio = fmt.Sprintf("%.2fx", etl/kc)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", k.set, dir, rate(etl, okE), rate(kc, okK), ratio)
	}
	return b.String()
}

func rate(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf("%.0f", v)
}
