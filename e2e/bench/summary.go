package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mlkube/mlkube/internal/loadgen"
)

// summarize renders results as one markdown table per setting (object size and objects in
// flight), rows in the order they ran: each row's rate as the median of its rounds with the
// range, and its ratio to each of its baselines, taken round by round (a row and its baseline ran
// minutes apart at most) as the median with the range. Small objects are counted in objects a
// second, objects of 1 MiB and more in MB/s.
func summarize(results []loadgen.RoundResult, baselines map[string][]string) string {
	type key struct{ size, inFlight int }
	var settings []key
	var order = map[key][]string{}
	rates := map[key]map[string]map[int]float64{} // setting → row → round → rate
	for _, r := range results {
		k := key{r.Size, r.InFlight}
		if rates[k] == nil {
			settings = append(settings, k)
			rates[k] = map[string]map[int]float64{}
		}
		if rates[k][r.Row] == nil {
			order[k] = append(order[k], r.Row)
			rates[k][r.Row] = map[int]float64{}
		}
		rate := r.ObjectsPerSecond()
		if r.Size >= 1<<20 {
			rate = r.MBPerSecond()
		}
		rates[k][r.Row][r.Round] = rate
	}
	var b strings.Builder
	for _, k := range settings {
		unit := "objects/s"
		if k.size >= 1<<20 {
			unit = "MB/s"
		}
		fmt.Fprintf(&b, "\n%s objects, %d in flight (%s, median of rounds and range)\n\n", sizeName(k.size), k.inFlight, unit)
		b.WriteString("| path | rate | against its baselines |\n|---|---|---|\n")
		for _, row := range order[k] {
			var ratios []string
			for _, base := range baselines[row] {
				if r := ratio(rates[k][row], rates[k][base]); r != "" {
					ratios = append(ratios, r+" "+base)
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", row, spread(values(rates[k][row]), "%.0f"), strings.Join(ratios, ", "))
		}
	}
	return b.String()
}

func values(m map[int]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// spread is the median of vs with their range: "0.52x (0.48–0.55)", or the one value.
func spread(vs []float64, format string) string {
	slices.Sort(vs)
	med := vs[len(vs)/2]
	if len(vs)%2 == 0 {
		med = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
	}
	if len(vs) == 1 {
		return fmt.Sprintf(format, med)
	}
	lo, hi := fmt.Sprintf(format, vs[0]), fmt.Sprintf(format, vs[len(vs)-1])
	return fmt.Sprintf(format+" (%s–%s)", med, strings.TrimSuffix(lo, "x"), hi)
}

// sizeName is an object size as the tables print it: "4 KiB", "64 MiB", "1 GiB".
func sizeName(size int) string {
	if size >= 1<<30 && size%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", size>>30)
	}
	if size >= 1<<20 {
		return fmt.Sprintf("%d MiB", size>>20)
	}
	return fmt.Sprintf("%d KiB", size>>10)
}
