// Command benchdoc puts a benchmark run's tables into docs/benchmarks.md: the text between
// "<!-- BEGIN name -->" and "<!-- END name -->" becomes a line saying when, where and at which
// commit the run was made, then the tables. make bench and make bench-cluster call it, so the
// document always shows the figures of the last run of each.
//
//	go run ./hack/bench/benchdoc -doc docs/benchmarks.md -block cluster -in _output/bench/cluster.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

func main() {
	doc := flag.String("doc", "docs/benchmarks.md", "the document to update")
	block := flag.String("block", "", "the name of the block to replace")
	in := flag.String("in", "", "the file holding the block's new tables")
	flag.Parse()
	if err := run(*doc, *block, *in); err != nil {
		fmt.Fprintln(os.Stderr, "benchdoc:", err)
		os.Exit(1)
	}
}

func run(doc, block, in string) error {
	if block == "" || in == "" {
		return fmt.Errorf("-block and -in are required")
	}
	tables, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	old, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	body := provenance(time.Now()) + "\n" + strings.TrimSpace(string(tables)) + "\n"
	updated, err := replaceBlock(old, block, body)
	if err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	tmp := doc + ".tmp"
	if err := os.WriteFile(tmp, updated, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, doc)
}

// replaceBlock returns doc with the text between block's markers replaced by body.
func replaceBlock(doc []byte, block, body string) ([]byte, error) {
	begin, end := "<!-- BEGIN "+block+" -->\n", "<!-- END "+block+" -->"
	i := bytes.Index(doc, []byte(begin))
	if i < 0 {
		return nil, fmt.Errorf("no %q marker; add the block's markers to the document", strings.TrimSpace(begin))
	}
	j := bytes.Index(doc[i:], []byte(end))
	if j < 0 {
		return nil, fmt.Errorf("block %s has no %q marker after its beginning", block, end)
	}
	var out bytes.Buffer
	out.Write(doc[:i+len(begin)])
	out.WriteString(body)
	out.Write(doc[i+j:])
	return out.Bytes(), nil
}

// provenance says when and where the figures were measured: a ratio means little without the
// machine it was taken on.
func provenance(now time.Time) string {
	cpu := "unknown CPU"
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.SplitSeq(string(info), "\n") {
			if name, ok := strings.CutPrefix(l, "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
				break
			}
		}
	}
	commit := "an unknown commit"
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	var kernel string
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		kernel = ", Linux " + strings.TrimSpace(string(out))
	}
	return fmt.Sprintf("_Measured %s at %s on %d CPUs (%s)%s, %s._\n",
		now.UTC().Format("2006-01-02 15:04 MST"), commit, runtime.NumCPU(), cpu, kernel, runtime.Version())
}
