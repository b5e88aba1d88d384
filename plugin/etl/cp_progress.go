package etl

import (
	"fmt"
	"io"
	"sync"
)

// copyProgress counts a copy's objects as its workers finish them: on a terminal a bar redrawn
// in place, otherwise a line per object, so logs keep what was copied.
type copyProgress struct {
	mu    sync.Mutex
	p     *Progress
	w     io.Writer
	tty   bool
	quiet bool
	// verb says what happened to an object: uploaded or downloaded.
	verb                   string
	total, copied, skipped int
}

func newCopyProgress(w io.Writer, tty, quiet bool, verb string, total int) *copyProgress {
	return &copyProgress{p: NewProgress(w, tty), w: w, tty: tty, quiet: quiet, verb: verb, total: total}
}

// finished counts t, copied or skipped.
func (c *copyProgress) finished(t transfer, skipped bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	what := c.verb
	if skipped {
		c.skipped++
		what = "skipped"
	} else {
		c.copied++
	}
	switch {
	case c.quiet:
	case c.tty:
		c.p.show(c.summaryLocked(), int64(c.copied+c.skipped), int64(c.total))
	default:
		fmt.Fprintf(c.w, "%s %s\n", what, t.object)
	}
}

// done ends the bar, and off a terminal prints the totals of a copy that succeeded (a failure's
// error says them).
func (c *copyProgress) done(succeeded bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.p.Done()
	if succeeded && !c.quiet && !c.tty {
		fmt.Fprintln(c.w, c.summaryLocked())
	}
}

// summary is how far the copy came.
func (c *copyProgress) summary() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.summaryLocked()
}

func (c *copyProgress) summaryLocked() string {
	s := fmt.Sprintf("%s %d of %d objects", c.verb, c.copied, c.total)
	if c.skipped > 0 {
		s += fmt.Sprintf(", skipped %d", c.skipped)
	}
	return s
}
