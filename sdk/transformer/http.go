package transformer

import (
	"io"
	"net/http"
	"strconv"

	"github.com/mlkube/mlkube/internal/bufpool"
)

// serveObject answers an hpush or hpull request.
func (h *Handler) serveObject(w http.ResponseWriter, r *http.Request, req request) {
	ctx := r.Context()
	if req.source == fromBody {
		// The Func may stream its result while it still reads the body (echo
		// and gzip do). By default Go's HTTP/1 server discards what is left
		// of the body when the answer starts, and the Func's further reads
		// fail. HTTP/2 is always full duplex and reports ErrNotSupported,
		// which is fine.
		_ = http.NewResponseController(w).EnableFullDuplex()
	}
	in, err := h.openInput(r, req)
	if err != nil {
		h.failObject(w, r, req, err)
		return
	}
	defer in.Close()
	out, err := h.fn(ctx, in, req.object, req.args)
	if err != nil {
		h.failObject(w, r, req, err)
		return
	}
	defer closeResult(out)
	if h.writeResult(w, r, req, out) && req.source == fromBody {
		// The client sends the whole object anyway; reading what the Func
		// left keeps the connection usable for the next object. With full
		// duplex, net/http would instead close it after the answer without
		// saying so, and the client could send its next request on a dead
		// connection. Usually the body is at its end and this returns at once.
		_, _ = io.Copy(io.Discard, r.Body) // best effort: a body that fails cannot be reused anyway
	}
}

// writeResult answers out; it reports whether the answer was a success.
func (h *Handler) writeResult(w http.ResponseWriter, r *http.Request, req request, out io.Reader) bool {
	buf := getBuffer()
	defer putBuffer(buf)
	n, complete, err := bufpool.Prefetch(out, *buf)
	if err != nil {
		h.failObject(w, r, req, err)
		return false
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if complete {
		w.Header().Set("Content-Length", strconv.Itoa(n))
		_, err := w.Write((*buf)[:n])
		return err == nil
	}
	if _, err := w.Write((*buf)[:n]); err != nil {
		return false // the client went away
	}
	srcErr, dstErr := bufpool.CopyStream(w, out)
	if srcErr != nil {
		h.log.Warn("transformation failed after its answer started; aborting the response",
			"object", req.object, "error", srcErr)
		// Breaks the chunked response, so the client sees an error rather
		// than a short result with status 200.
		panic(http.ErrAbortHandler)
	}
	return dstErr == nil
}

// openInput returns the object's bytes: the request body, a node-local file,
// or the body of the src URL.
func (h *Handler) openInput(r *http.Request, req request) (io.ReadCloser, error) {
	switch req.source {
	case fromFQN:
		return h.openFQN(req.ref)
	case fromSrc:
		return h.fetch(r, req.ref)
	}
	return r.Body, nil
}

// errorDrainLimit is how much of an unread request body a failed object
// reads to keep the connection: as much as net/http itself discards after a
// handler. A larger remainder closes the connection instead, so the client
// learns of the error without sending the whole object.
const errorDrainLimit = 256 << 10

// failObject answers a failed object, and logs it at debug level only: the
// client receives the error. When the request body is not used up, the
// answer says that the connection closes; with full duplex, net/http would
// otherwise close it without saying so.
func (h *Handler) failObject(w http.ResponseWriter, r *http.Request, req request, err error) {
	h.log.Debug("object failed", "object", req.object, "error", err)
	if req.source == fromBody && !drained(r.Body, errorDrainLimit) {
		w.Header().Set("Connection", "close")
	}
	writeError(w, err)
}
