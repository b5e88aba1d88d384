package etl

import (
	"fmt"
	"io"
	"strings"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// barWidth is the number of cells of the progress bar: with the counts, rate and ETA beside it,
// the line fits an 80-column terminal.
const barWidth = 24

// done counts objects as the run's status.progress does: transformed now or by an earlier
// attempt (skipped).
func done(c v1alpha1.RunCounts) int64 { return c.DoneObjects + c.SkippedObjects }

// bar draws done of total in width cells; an unknown total (nothing planned yet) is empty.
func bar(done, total int64, width int) string {
	filled := 0
	if total > 0 {
		filled = int(min(done, total) * int64(width) / total)
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
}

// ProgressText is one run's progress in words: its phase, done/total objects, the failed ones,
// and the rate and ETA the controller computed (the same figures `kubectl get etlrun` shows).
func ProgressText(st v1alpha1.TransformRunStatus) string {
	c := st.Totals
	parts := []string{fmt.Sprintf("%s %d/%d objects", phase(st), done(c), c.PlannedObjects)}
	if c.FailedObjects > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", c.FailedObjects))
	}
	if st.Rate != "" {
		parts = append(parts, st.Rate)
	}
	if st.ETA != "" {
		parts = append(parts, "ETA "+st.ETA)
	}
	return strings.Join(parts, ", ")
}

// ProgressBar is ProgressText behind a bar, as Update draws it on a terminal.
func ProgressBar(st v1alpha1.TransformRunStatus) string {
	p := NewProgress(io.Discard, true)
	p.Update(st)
	return p.last
}

func phase(st v1alpha1.TransformRunStatus) v1alpha1.RunPhase { return orPending(st.Phase) }

// orPending is p, or Pending before the controller or an agent wrote one.
func orPending(p v1alpha1.RunPhase) v1alpha1.RunPhase {
	if p == "" {
		return v1alpha1.RunPending
	}
	return p
}

// Progress draws a run's progress as its status changes: on a terminal one line redrawn in place,
// otherwise (a log, a pipe) a plain line per change, so logs keep a readable history.
type Progress struct {
	w    io.Writer
	tty  bool
	last string
	// height is the number of lines UpdateNodes drew last, to move back over.
	height int
}

// NewProgress draws on w, in place when tty.
func NewProgress(w io.Writer, tty bool) *Progress { return &Progress{w: w, tty: tty} }

// Update draws st unless it shows what the last update showed.
func (p *Progress) Update(st v1alpha1.TransformRunStatus) {
	p.show(ProgressText(st), done(st.Totals), st.Totals.PlannedObjects)
}

// show draws text, behind a bar of done of total on a terminal, unless it is the last line drawn.
func (p *Progress) show(text string, done, total int64) {
	line := text
	if p.tty {
		line = bar(done, total, barWidth) + " " + text
	}
	if line == p.last {
		return
	}
	p.last, p.height = line, 1
	if p.tty {
		// Carriage return and erase to the end of the line: a shorter line leaves no tail.
		fmt.Fprint(p.w, "\r"+line+"\x1b[K")
		return
	}
	fmt.Fprintln(p.w, line)
}

// Done ends the drawing, so what follows starts on a line of its own; a second call does nothing.
func (p *Progress) Done() {
	if p.tty && p.last != "" {
		fmt.Fprintln(p.w)
	}
	p.last, p.height = "", 0
}

// nodeText is one node's share in words, as a line under the run's on a terminal.
func nodeText(n v1alpha1.RunNodeStatus) string {
	parts := []string{fmt.Sprintf("%s %d/%d objects", orPending(n.Phase), done(n.RunCounts), n.PlannedObjects)}
	if n.FailedObjects > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", n.FailedObjects))
	}
	parts = append(parts, Bytes(n.DoneBytes)+"/"+Bytes(n.PlannedBytes))
	return strings.Join(parts, ", ")
}

// UpdateNodes draws st as Update does and, on a terminal, a line per node under it, the block
// redrawn in place. Off a terminal only the run's line is written: a log keeps one line per
// change, not one per node and change.
func (p *Progress) UpdateNodes(st v1alpha1.TransformRunStatus) {
	if !p.tty || len(st.Nodes) == 0 {
		p.Update(st)
		return
	}
	width := 0
	for _, n := range st.Nodes {
		width = max(width, len(n.Node))
	}
	lines := []string{bar(done(st.Totals), st.Totals.PlannedObjects, barWidth) + " " + ProgressText(st)}
	for _, n := range st.Nodes {
		lines = append(lines, fmt.Sprintf("  %-*s %s %s", width, n.Node, bar(done(n.RunCounts), n.PlannedObjects, barWidth/2), nodeText(n)))
	}
	block := strings.Join(lines, "\x1b[K\n") + "\x1b[K"
	if block == p.last {
		return
	}
	// Back to the first line of the block drawn before; erasing to the end of the screen
	// afterwards leaves no line of a node that is gone.
	up := ""
	if p.height > 1 {
		up = fmt.Sprintf("\x1b[%dA", p.height-1)
	}
	fmt.Fprint(p.w, up+"\r"+block+"\x1b[J")
	p.last, p.height = block, len(lines)
}
