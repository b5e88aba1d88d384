package ioframe

import (
	"bufio"
	"errors"
	"io"
)

// Func transforms one object: it reads the object from in and writes its result to out. An
// error fails that object alone; Serve goes on with the next.
type Func func(object, args string, in io.Reader, out io.Writer) error

// Serve is a persistent io command's loop: it reads requests from r (the command's stdin) and
// answers each on w (its stdout) until r ends. It returns nil at a clean end, or the error that
// broke the framing or the pipes.
func Serve(r io.Reader, w io.Writer, f Func) error {
	in := bufio.NewReaderSize(r, 256<<10)
	out := bufio.NewWriterSize(w, 256<<10)
	for {
		object, args, err := ReadRequestHeader(in)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		body := NewChunkReader(in)
		result := NewChunkWriter(out)
		ferr := f(object, args, body, result)
		// The object is read to its end whatever f did, so that the next request starts in
		// step.
		if derr := body.Drain(); derr != nil {
			return derr
		}
		if ferr != nil {
			err = result.Fail(ferr.Error())
		} else {
			err = result.Close()
		}
		if err == nil {
			err = out.Flush()
		}
		if err != nil {
			return err
		}
	}
}
