// Package kubetest holds what the integration suite (controller/integration, a real
// kube-apiserver from envtest) and the e2e suite (e2e/suite, a real cluster) share for acting on
// objects through an API server and waiting on what the controllers make of them: a [Client] that
// polls with its suite's own interval and timeout and fails at once on a [Stop]; create, get and
// patch helpers that fail the test; the pods and Services of an MxJob or a Transform; waits for an
// object's state ([WaitFor]) and the suspend and stop steps built on them; the check that
// webhook configurations carry the CA bundle; and, for tests of RBAC, token and access reviews,
// a bare API server of their own ([StartAPIServer]) and a client acting as a user ([Impersonate]).
package kubetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client is a controller-runtime client with the poll interval and timeout of one suite: an
// envtest API server answers in milliseconds, a loaded cluster starts a pod in minutes.
type Client struct {
	client.Client
	Interval time.Duration // between two checks of a condition
	Timeout  time.Duration // after which a wait fails the test
}

// Eventually polls cond until it holds or c.Timeout passes; no sleeps as synchronisation. An
// error from cond is retried (the API server may be briefly unreachable), except one made by
// [Stop]: the object reached a state that waiting cannot change, and the test fails at once.
func (c Client) Eventually(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), c.Interval, c.Timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if errors.As(err, new(terminalError)) {
			return false, err
		}
		if err != nil {
			last = err
			return false, nil //nolint:nilerr // retried until c.Timeout, which then reports last
		}
		return ok, nil
	})
	if errors.As(err, new(terminalError)) {
		t.Fatalf("waiting for %s: %v", what, err)
	}
	if err != nil {
		t.Fatalf("timed out waiting for %s (last error: %v)", what, last)
	}
}

// terminalError is a condition's verdict that the awaited state can no longer come.
type terminalError struct{ error }

// Stop marks err as terminal for [Client.Eventually]: the wait fails at once with it.
func Stop(err error) error { return terminalError{err} }
