package agent

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// serveObject answers GET PathObjects{object...} with the raw object from
// the data root: where hpull transformers fetch the objects they transform.
func (a *Agent) serveObject(w http.ResponseWriter, r *http.Request) {
	p := transformPath{}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		a.fail(w, p, withStatus(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method)))
		return
	}
	object, err := parseObject(strings.TrimPrefix(r.URL.EscapedPath(), PathObjects))
	p.object = object
	if err != nil {
		a.fail(w, p, badPath(err))
		return
	}
	f, size, err := a.root.open(object)
	if err != nil {
		a.fail(w, p, err)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method == http.MethodHead {
		return
	}
	// net/http copies a file to the connection with sendfile(2). The headers
	// are sent: a failed copy leaves the body short of its Content-Length,
	// so net/http breaks the connection and the client sees the failure.
	_, _ = io.Copy(w, f)
}
