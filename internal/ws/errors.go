package ws

import (
	"errors"
	"fmt"
	"strings"
)

// StatusCode is a close frame's status (RFC 6455 section 7.4).
type StatusCode int

const (
	StatusNormalClosure   StatusCode = 1000
	StatusGoingAway       StatusCode = 1001
	StatusProtocolError   StatusCode = 1002
	StatusNoStatusRcvd    StatusCode = 1005
	StatusPolicyViolation StatusCode = 1008
	StatusInternalError   StatusCode = 1011
)

// CloseError is a close frame received from the peer.
type CloseError struct {
	Code   StatusCode
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("ws closed by peer: status %d: %s", e.Code, e.Reason)
}

// CloseStatus returns the status of the close frame behind err, or -1 when
// err does not come from one.
func CloseStatus(err error) StatusCode {
	if ce, ok := errors.AsType[*CloseError](err); ok {
		return ce.Code
	}
	return -1
}

// ProtocolError is a frame that breaks RFC 6455; the connection is closed
// with StatusProtocolError.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return "ws protocol error: " + e.Reason }

func protocolError(reason string) error { return &ProtocolError{Reason: reason} }

// ErrClosed is what operations on a connection closed by this side return.
var ErrClosed = errors.New("ws connection closed")

// closeReason fits a reason into a close frame, which holds 123 bytes of it
// in UTF-8.
func closeReason(s string) string {
	const limit = maxControlPayload - 2
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "")
}
