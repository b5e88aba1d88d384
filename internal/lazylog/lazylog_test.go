package lazylog

import (
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// TestLinesCarryThePairsAndTheCaller: what a line says is what base.WithValues would have made it
// say, the caller's file and line included.
func TestLinesCarryThePairsAndTheCaller(t *testing.T) {
	var lines []string
	base := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{LogCaller: funcr.All, Verbosity: 1})
	log := WithValues(base.WithName("admission"), "kind", "MxJob", "name", "a").WithValues("user", "alice").WithName("mxjob")
	_, _, line, _ := runtime.Caller(0)
	log.V(1).Info("received", "n", 1)
	log.Error(errors.New("boom"), "refused")
	log.V(2).Info("not written")
	if len(lines) != 2 {
		t.Fatalf("lines %q; want 2", lines)
	}
	callerAt := func(l int) string { return `"caller"={"file"="lazylog_test.go" "line"=` + strconv.Itoa(l) + `}` }
	for i, want := range []string{
		`admission/mxjob ` + callerAt(line+1) + ` "level"=1 "msg"="received" "kind"="MxJob" "name"="a" "user"="alice" "n"=1`,
		`admission/mxjob ` + callerAt(line+2) + ` "msg"="refused" "error"="boom" "kind"="MxJob" "name"="a" "user"="alice"`,
	} {
		if lines[i] != want {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], want)
		}
	}
}

// TestPairsEncodedOnlyForLines: a logger that writes nothing never gets the pairs.
func TestPairsEncodedOnlyForLines(t *testing.T) {
	c := &counting{}
	log := WithValues(logr.New(c), "kind", "MxJob").WithValues("name", "a")
	log.V(5).Info("disabled")
	if c.withValues != 0 {
		t.Fatalf("%d WithValues before any line; want 0", c.withValues)
	}
	log.Info("written")
	if c.withValues != 1 || strings.Join(c.kv, ",") != "kind,MxJob,name,a" {
		t.Errorf("%d WithValues with %q for one line; want 1 with kind,MxJob,name,a", c.withValues, c.kv)
	}
}

// counting is a sink that counts its WithValues and enables V(0) only.
type counting struct {
	withValues int
	kv         []string
}

func (c *counting) Init(logr.RuntimeInfo)        {}
func (c *counting) Enabled(level int) bool       { return level == 0 }
func (c *counting) Info(int, string, ...any)     {}
func (c *counting) Error(error, string, ...any)  {}
func (c *counting) WithName(string) logr.LogSink { return c }
func (c *counting) WithValues(kv ...any) logr.LogSink {
	c.withValues++
	for _, v := range kv {
		c.kv = append(c.kv, v.(string))
	}
	return c
}
