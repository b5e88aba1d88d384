package python

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"

	"github.com/mlkube/mlkube/runtimes/proc"
	"github.com/mlkube/mlkube/sdk/transformer"
)

// Frame status bytes; see worker.py.
const (
	statusOK        = '0'
	statusError     = '1'
	statusLoadError = '2'
	kindCall        = 'c'
	kindName        = 'n'
	kindArgs        = 'a'
)

// LoadError is a source that does not load: it does not compile, raises, or
// lacks the function. Its message names the variable at fault.
type LoadError struct{ Message string }

func (e *LoadError) Error() string { return e.Message }

// worker is one Python process. It serves one call at a time.
type worker struct{ *proc.Worker }

// workerSpec is how to start a worker.
type workerSpec struct {
	python string
	script string
	path   []string // put first on sys.path
	conf   Config
	stderr io.Writer // also receives the worker's stderr, if not nil
}

// startWorker starts a worker and waits for its greeting: ready, or a
// *LoadError.
func startWorker(ctx context.Context, s workerSpec) (*proc.Worker, error) {
	cmd := exec.Command(s.python, append([]string{"-u", s.script}, s.path...)...)
	cmd.Env = append(os.Environ(), EnvSource+"="+s.conf.Source, EnvFunction+"="+s.conf.Function,
		"PYTHONDONTWRITEBYTECODE=1")
	pw, err := proc.StartWorker("python worker", cmd, s.stderr)
	if err != nil {
		return nil, err
	}
	w := worker{pw}
	defer w.KillIfDone(ctx)()
	status, msg, err := w.readFrame()
	switch {
	case err != nil:
		w.Kill()
		return nil, w.DeathError("at start", ctx.Err())
	case status == statusLoadError:
		w.Kill()
		return nil, &LoadError{Message: string(msg)}
	case status != statusOK:
		w.Kill()
		return nil, fmt.Errorf("python worker: unexpected greeting %q", status)
	}
	return pw, nil
}

// call runs the function on data, the object's name and the request's args
// going first in frames of their own (the worker passes them if the
// function's signature asks). A Python exception is an error with the
// worker still usable; any other error leaves the worker dead. When ctx ends
// first, the worker is killed and ctx's error returned.
func (w *worker) call(ctx context.Context, data []byte, object, args string) ([]byte, error) {
	if len(data) > math.MaxUint32 {
		return nil, transformer.StatusError(http.StatusRequestEntityTooLarge,
			fmt.Errorf("%d bytes do not fit one call: set a chunk size", len(data)))
	}
	defer w.KillIfDone(ctx)()
	// One write for the small frames and the call's header; names and args
	// are bounded far below 4 GiB by the agent (1 KiB, 4 KiB).
	head := make([]byte, 0, 15+len(object)+len(args))
	head = appendFrame(head, kindName, object)
	head = appendFrame(head, kindArgs, args)
	head = append(head, kindCall)
	head = binary.BigEndian.AppendUint32(head, uint32(len(data)))
	_, err := w.In.Write(head)
	if err == nil {
		_, err = w.In.Write(data)
	}
	var status byte
	var out []byte
	if err == nil {
		status, out, err = w.readFrame()
	}
	if err != nil {
		w.Kill()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, w.DeathError("while transforming", nil)
	}
	switch status {
	case statusOK:
		return out, nil
	case statusError:
		return nil, errors.New(string(out))
	}
	w.Kill()
	return nil, fmt.Errorf("python worker: unexpected answer %q", status)
}

func appendFrame(b []byte, kind byte, payload string) []byte {
	b = append(b, kind)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}

// readFrame reads one frame from the worker.
func (w *worker) readFrame() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(w.Out, hdr[:]); err != nil {
		return 0, nil, err
	}
	buf := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
	if _, err := io.ReadFull(w.Out, buf); err != nil {
		return 0, nil, err
	}
	return hdr[0], buf, nil
}
