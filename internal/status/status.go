// Package status gives the node agent's errors the HTTP status that answers
// them: the agent's HTTP side and its run executor (package noderun) both
// fail with these, and the agent answers them as JSON errors.
package status

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Error is an error with the status that answers it.
type Error struct {
	code int
	err  error
}

func (e *Error) Error() string { return e.err.Error() }
func (e *Error) Unwrap() error { return e.err }

// With returns err answered with code.
func With(code int, err error) error { return &Error{code: code, err: err} }

// BadRequest is err answered 400.
func BadRequest(err error) error { return With(http.StatusBadRequest, err) }

// NotFound is err answered 404.
func NotFound(err error) error { return With(http.StatusNotFound, err) }

// Code returns the status err carries; a deadline is the object timeout,
// 504. It reports false for an error that carries none.
func Code(err error) (int, bool) {
	if se, ok := errors.AsType[*Error](err); ok {
		return se.code, true
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout, true
	}
	return 0, false
}

// Of returns the status that answers err: an error that carries none
// happened on the way to a transformer, 502.
func Of(err error) int {
	if code, ok := Code(err); ok {
		return code
	}
	return http.StatusBadGateway
}

// Message returns the client-facing message of err.
func Message(err error) string {
	if code, _ := Code(err); code == http.StatusGatewayTimeout {
		return fmt.Sprintf("object timeout: %v", err)
	}
	return err.Error()
}
