package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/status"
)

// streamAuth re-authorizes the caller of an open client stream. A stream
// is authorized when it opens; without this, a caller whose RoleBinding is
// removed would keep transforming for as long as it keeps the stream open.
// Before an object, once Options.StreamReauthorize has passed since the
// last answer, it asks the Authorizer again about the caller that opened
// the stream (not its token, which may have expired meanwhile). The
// Authorizer's cache (access.Reviewer keeps an allowed answer a minute)
// makes a re-check within its TTL a lookup and one past it a
// SubjectAccessReview, so an open stream costs the API server at most one
// review per request and TTL, as a caller sending requests one by one does.
// Only the stream's reader goroutine uses it.
type streamAuth struct {
	access Authorizer
	caller access.Caller
	path   transformPath
	every  time.Duration
	next   time.Time
	// refused is the close reason once the caller lost the right.
	refused string
}

// check returns nil when the caller may go on; an access error (see
// access.Status) when not, or when no answer could be had.
func (s *streamAuth) check(ctx context.Context) error {
	now := time.Now()
	if now.Before(s.next) {
		return nil
	}
	for _, q := range useTransforms(s.path) {
		if err := s.access.Authorize(ctx, s.caller, q); err != nil {
			return err
		}
	}
	s.next = now.Add(s.every)
	return nil
}

// withdrawn says whether err ends the stream: RBAC said no. Any other
// failure (the reviewer's rate, an API server that does not answer) fails
// only the object, and the next object asks again.
func withdrawn(err error) bool {
	return errors.Is(err, access.ErrForbidden) || errors.Is(err, access.ErrUnauthenticated)
}

// reason is the close reason of a stream whose caller lost the right to it
// (a close frame carries at most 123 bytes of it).
func (s *streamAuth) reason() string {
	return fmt.Sprintf("forbidden: RBAC no longer lets %s use Transform %s/%s; reconnect once allowed",
		s.caller.Name, s.path.namespace, s.path.pipeline[0])
}

// reauthFailure is the answer to one object whose re-check got no answer.
func reauthFailure(err error) error {
	return status.With(access.Status(err), fmt.Errorf("re-authorizing the stream: %w", err))
}
