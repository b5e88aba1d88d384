package agent

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/status"
)

// batchBuffer is the write buffer of a batch answer: small objects' headers, names and bytes go
// out in few writes.
const batchBuffer = 64 << 10

// isBatch says whether r is a batch read (wire.QueryBatch) of the namespace p.
func isBatch(r *http.Request, p objectPath) bool {
	return r.Method == http.MethodPost && p.object == "" && r.URL.Query().Get(wire.QueryBatch) == "true"
}

// serveBatch answers a batch read from this node's data root: each object asked for, in order,
// or why it cannot be read (404: not on this node). Every object is opened before the answer
// begins, so the answer has a Content-Length (a client reads it in one piece, not chunk by
// chunk); a failure after it began (a client gone, a file cut short) ends the connection, so the
// client sees a short body, never a wrong one.
func (a *Agent) serveBatch(w http.ResponseWriter, r *http.Request, p objectPath) {
	names, err := readBatchRequest(w, r)
	if err != nil {
		a.failObject(w, p, err)
		return
	}
	ns := a.objects.namespace(p.namespace)
	items := make([]batchItem, len(names))
	defer func() {
		for _, it := range items {
			if it.f != nil {
				it.f.Close()
			}
		}
	}()
	var total int64
	for i, name := range names {
		it := &items[i]
		it.name = name
		it.f, it.size, err = ns.Open(name)
		if err != nil {
			it.code, it.msg = status.Of(err), status.Message(err)
			it.size = int64(len(it.msg))
		}
		total += wire.BatchHeaderSize + int64(len(name)) + it.size
	}
	h := w.Header()
	h.Set("Content-Type", wire.ContentTypeBatch)
	h.Set("Content-Length", strconv.FormatInt(total, 10))
	h.Set(wire.HeaderNode, a.opts.Node)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, batchBuffer)
	for i := range items {
		if err := items[i].write(bw); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	if err := bw.Flush(); err != nil {
		panic(http.ErrAbortHandler)
	}
}

// A batchItem is one object of a batch answer: its open file and size, or its error.
type batchItem struct {
	name string
	f    *os.File
	size int64
	code int
	msg  string
}

// write writes the item's header, name and bytes (or error message). A bufio.Writer keeps its
// first error and refuses every write after it, so the last write's error is every write's.
func (it *batchItem) write(bw *bufio.Writer) error {
	code := http.StatusOK
	if it.f == nil {
		code = it.code
	}
	var hdr [wire.BatchHeaderSize]byte
	_, _ = bw.Write(wire.AppendBatchHeader(hdr[:0], code, it.name, it.size))
	_, _ = bw.WriteString(it.name)
	if it.f == nil {
		_, err := bw.WriteString(it.msg)
		return err
	}
	n, err := io.CopyN(bw, it.f, it.size)
	if err == nil && n != it.size {
		err = fmt.Errorf("object %q: %d of %d bytes", it.name, n, it.size)
	}
	return err
}

// readBatchRequest reads and checks a batch request's names: at least one, at most
// wire.MaxBatchObjects, each a name the object API accepts.
func readBatchRequest(w http.ResponseWriter, r *http.Request) ([]string, error) {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, wire.MaxBatchRequestBytes))
	dec.DisallowUnknownFields()
	var req wire.BatchRequest
	if err := dec.Decode(&req); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, status.With(http.StatusRequestEntityTooLarge, fmt.Errorf("a batch request of over %d bytes: ask for fewer objects at a time", wire.MaxBatchRequestBytes))
		}
		return nil, status.BadRequest(fmt.Errorf(`batch request: %w; want {"objects": ["name", ...]}`, err))
	}
	switch n := len(req.Objects); {
	case n == 0:
		return nil, status.BadRequest(errors.New("batch request: objects is empty; name at least one object"))
	case n > wire.MaxBatchObjects:
		return nil, status.BadRequest(fmt.Errorf("batch request: %d objects are over the limit of %d; ask for fewer at a time", n, wire.MaxBatchObjects))
	}
	for i, name := range req.Objects {
		if err := wire.CheckObject(name); err != nil {
			return nil, status.BadRequest(fmt.Errorf("batch request: objects[%d]: %w", i, err))
		}
		if err := checkVisible(name); err != nil {
			return nil, status.BadRequest(fmt.Errorf("batch request: objects[%d]: %w", i, err))
		}
	}
	return req.Objects, nil
}
