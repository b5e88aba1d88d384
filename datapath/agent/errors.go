package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Error is the JSON body of every failed request.
type Error struct {
	Error     string `json:"error"`
	Transform string `json:"transform,omitempty"`
	Object    string `json:"object,omitempty"`
	Node      string `json:"node"`
}

// statusError is an error with the status that answers it.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func withStatus(code int, err error) error { return &statusError{code: code, err: err} }

func badPath(err error) error  { return withStatus(http.StatusBadRequest, err) }
func notFound(err error) error { return withStatus(http.StatusNotFound, err) }

// transformerError is a failure the transformer answered; its message is
// kept verbatim.
func transformerError(msg string) error {
	return withStatus(http.StatusBadGateway, errors.New(msg))
}

// errTooLarge is an object over the agent's size limit.
var errTooLarge = withStatus(http.StatusRequestEntityTooLarge, errors.New("object exceeds the size limit"))

// statusOf returns the status that answers err. A deadline is the object
// timeout; any unclassified error happened on the way to the transformer.
func statusOf(err error) int {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.code
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, ErrUnknownTransform):
		return http.StatusNotFound
	}
	if _, ok := errors.AsType[*NotRunningError](err); ok {
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// messageOf returns the client-facing message of err.
func messageOf(err error) string {
	if statusOf(err) == http.StatusGatewayTimeout {
		return fmt.Sprintf("object timeout: %v", err)
	}
	return err.Error()
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
