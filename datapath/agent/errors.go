package agent

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/status"
)

// Error is the JSON body of every failed request.
type Error struct {
	Error     string `json:"error"`
	Transform string `json:"transform,omitempty"`
	Object    string `json:"object,omitempty"`
	Node      string `json:"node"`
}

// transformerError is a failure the transformer answered; its message is
// kept verbatim, but for the secrets of any presigned URL it quotes: a
// transformer handed one may say it in its error, which goes on to logs,
// events, statuses and a run's error manifest.
func transformerError(msg string) error {
	return status.With(http.StatusBadGateway, errors.New(wire.RedactPresigned(msg)))
}

// answered is a transformer's failure (a transformerError) and the status it
// answered with, which the agent does not pass on as its own: a transformer's
// 404 is not a missing Transform. Where the status has one meaning whoever
// says it (a presigned object the store does not have), the caller may.
type answered struct {
	code int
	err  error
}

func (e answered) Error() string { return e.err.Error() }
func (e answered) Unwrap() error { return e.err }

// statusOf returns the status that answers err: the one it carries (package
// status), else a Resolver's failure, else a failure on the way to the
// transformer.
func statusOf(err error) int {
	if code, ok := status.Code(err); ok {
		return code
	}
	if errors.Is(err, ErrUnknownTransform) {
		return http.StatusNotFound
	}
	if _, ok := errors.AsType[*NotRunningError](err); ok {
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// writeError answers e with status code.
func writeError(w http.ResponseWriter, code int, e Error) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("X-Content-Type-Options", "nosniff")
	writeJSON(w, code, e)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// The status is sent; a client that went away has nothing to be told.
	_ = json.NewEncoder(w).Encode(v)
}
