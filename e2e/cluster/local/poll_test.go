package local

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	calls := 0
	err := poll(context.Background(), 10*time.Second, func() (bool, error) {
		calls++
		if calls < 3 {
			return false, errors.New("not yet") // keeps polling
		}
		return true, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("poll = %v after %d calls, want success on the 3rd", err, calls)
	}
}

func TestPollErrTimesOutWithLastReason(t *testing.T) {
	err := pollErr(context.Background(), 300*time.Millisecond, "the thing", func() (bool, error) {
		return false, errors.New("still starting")
	})
	if err == nil || !strings.Contains(err.Error(), "the thing") || !strings.Contains(err.Error(), "still starting") {
		t.Errorf("err = %v, want what was awaited and the last reason", err)
	}
	err = pollErr(context.Background(), 300*time.Millisecond, "quiet", func() (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline when cond gave no reason", err)
	}
}
