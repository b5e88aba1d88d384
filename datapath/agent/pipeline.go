package agent

import (
	"context"
	"io"
	"sync/atomic"
	"time"
)

// objectRun is one object on its way through a pipeline: the stages run so
// far with the bytes that went in and out of each, for stats and metrics.
type objectRun struct {
	a        *Agent
	object   string
	start    time.Time
	stages   []stageRun
	exceeded atomic.Bool
	// in counts the first stage's input when the agent streams it; with a
	// local object, inSize is the file's size.
	in     *countingReader
	inSize int64
	// wsConns are the ws connections of the stages, see input.wsConns.
	wsConns []*wsConn
}

type stageRun struct {
	t   Target
	out *countingReader
}

// run starts every stage, each reading the previous one's result, and
// returns the last result with its size or -1. On failure, the stages
// started so far are closed and recorded.
func (o *objectRun) run(ctx context.Context, targets []Target, in input) (io.ReadCloser, int64, error) {
	if in.body != nil {
		o.in = &countingReader{r: in.body}
		in.body = o.in
	}
	in.wsConns = &o.wsConns
	var size int64
	for _, t := range targets {
		comm, err := o.a.communicatorFor(t.Communication)
		if err == nil {
			var result io.ReadCloser
			if result, size, err = comm.transform(ctx, t, in, &o.exceeded); err == nil {
				out := &countingReader{r: result}
				o.stages = append(o.stages, stageRun{t: t, out: out})
				in = input{object: in.object, args: in.args, body: out, size: size, wsConns: in.wsConns}
				continue
			}
		}
		o.stages = append(o.stages, stageRun{t: t})
		o.close()
		return nil, 0, o.classify(err)
	}
	return readCloser{o.stages[len(o.stages)-1].out, closerFunc(o.close)}, size, nil
}

// classify turns an error caused by the size limit, wherever it surfaced,
// into the limit's own.
func (o *objectRun) classify(err error) error {
	if err != nil && o.exceeded.Load() {
		return o.a.size.err
	}
	return err
}

// close closes the results, last stage first.
func (o *objectRun) close() {
	for i := len(o.stages) - 1; i >= 0; i-- {
		if out := o.stages[i].out; out != nil {
			out.r.(io.Closer).Close()
		}
	}
}

// sizes returns the bytes that went into the first stage and came out of
// the last.
func (o *objectRun) sizes() (in, out int64) {
	in = o.inSize
	if o.in != nil {
		in = o.in.n.Load()
	}
	if n := len(o.stages); n > 0 && o.stages[n-1].out != nil {
		out = o.stages[n-1].out.n.Load()
	}
	return in, out
}

// finish records the object in stats and metrics: every stage that ran
// counts it, and the last one carries the failure, if any (code 0 is
// success).
func (o *objectRun) finish(code int, msg string) {
	d := time.Since(o.start)
	bytesIn, _ := o.sizes()
	for i, s := range o.stages {
		var bytesOut int64
		if s.out != nil {
			bytesOut = s.out.n.Load()
		}
		c, m := 0, ""
		if i == len(o.stages)-1 {
			c, m = code, msg
		}
		key := s.t.Key()
		o.a.stats.observe(key, bytesIn, bytesOut, o.object, c, m, o.start)
		o.a.metrics.observe(key, string(s.t.Communication), bytesIn, bytesOut, d, c)
		bytesIn = bytesOut
	}
}

// countingReader counts the bytes read through it.
// Atomic, because a transport may still read a request body when the
// object is recorded.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
