package psrendezvous

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func localConfig(t *testing.T, changes ...string) Config {
	t.Helper()
	cfg, err := ConfigFromEnv(getenv(with(localEnv(), changes...)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestRunLocal(t *testing.T) {
	var out syncBuffer
	if err := Run(t.Context(), localConfig(t), &out); err != nil {
		t.Fatal(err)
	}
	want := []string{"worker-0: local mode, no peers: computed [1 1 1], OK", "worker-0: finished OK"}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(out.String()), "\n")); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestRunInjectsFailureBeforeWorking(t *testing.T) {
	var out syncBuffer
	err := Run(t.Context(), localConfig(t, EnvFailReplica, "worker-0", EnvFailCode, "42"), &out)
	if got := injectedCode(t, err); got != 42 {
		t.Errorf("got exit code %d, want 42", got)
	}
	if strings.Contains(out.String(), "local mode") {
		t.Errorf("the injected failure came after the work:\n%s", out.String())
	}
}

func TestRunSleepEndsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, localConfig(t, EnvSleep, "1h"), &out) }()
	// Cancel only once the sleep began, as SIGTERM would during a test's wait.
	waitForLine(t, &out, "worker-0: sleeping 1h0m0s before exiting")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want the cancellation", err)
	}
}
