package transformer

import (
	"errors"
	"io"
	"net/http"
)

// statusError is an error with the HTTP status that answers it.
type statusError struct {
	code int
	err  error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// StatusError makes err fail an object with HTTP status code instead of 500,
// for example 400 for arguments the Func does not understand. Over ws only the
// message travels.
func StatusError(code int, err error) error {
	return &statusError{code: code, err: err}
}

func badRequest(err error) error { return StatusError(http.StatusBadRequest, err) }

// statusOf returns the HTTP status that answers err.
func statusOf(err error) int {
	if se, ok := errors.AsType[*statusError](err); ok {
		return se.code
	}
	return http.StatusInternalServerError
}

// writeError answers err with its status and its message as the body, as the
// wire contract asks (no trailing newline, unlike http.Error).
func writeError(w http.ResponseWriter, err error) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(statusOf(err))
	_, _ = io.WriteString(w, err.Error()) // a client that went away has nothing to be told
}
