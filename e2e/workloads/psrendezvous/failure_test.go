package psrendezvous

import (
	"bytes"
	"errors"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFailurePlanCheck(t *testing.T) {
	for name, tc := range map[string]struct {
		plan     FailurePlan
		node     string
		wantCode int // 0: no failure
	}{
		"disabled":         {FailurePlan{}, "worker-1", 0},
		"another replica":  {FailurePlan{Replica: "worker-2", Code: 1, Mode: FailAlways}, "worker-1", 0},
		"always":           {FailurePlan{Replica: "worker-1", Code: 137, Mode: FailAlways}, "worker-1", 137},
		"scheduler always": {FailurePlan{Replica: "scheduler", Code: 3, Mode: FailAlways}, "scheduler", 3},
	} {
		t.Run(name, func(t *testing.T) {
			err := tc.plan.Check(tc.node, log.New(&bytes.Buffer{}, "", 0))
			if got := injectedCode(t, err); got != tc.wantCode {
				t.Errorf("got exit code %d, want %d (error %v)", got, tc.wantCode, err)
			}
		})
	}
}

// injectedCode returns the code of an InjectedFailure, 0 for nil, and fails the
// test on any other error.
func injectedCode(t *testing.T, err error) int {
	t.Helper()
	var injected *InjectedFailure
	switch {
	case err == nil:
		return 0
	case errors.As(err, &injected):
		return injected.Code
	}
	t.Fatalf("unexpected error: %v", err)
	return 0
}

func TestFailOnceSurvivesRecreation(t *testing.T) {
	dir := t.TempDir()
	plan := FailurePlan{Replica: "worker-1", Code: 137, Mode: FailOnce, OnceMarker: filepath.Join(dir, "failed-once")}
	var out bytes.Buffer
	logger := log.New(&out, "worker-1: ", 0)

	// Each Check stands for a new pod of worker-1 on the same volume.
	for run, wantCode := range []int{137, 0, 0} {
		if got := injectedCode(t, plan.Check("worker-1", logger)); got != wantCode {
			t.Fatalf("run %d: got exit code %d, want %d", run, got, wantCode)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "failed-once" {
		t.Errorf("directory holds %v, want only the marker (no temp files left)", entries)
	}
	for _, want := range []string{
		"worker-1: injecting failure: exit code 137 (mode once)",
		"worker-1: failure already injected once (marker " + plan.OnceMarker + " present); running normally",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
}

func TestFailOnceMarkerUnwritable(t *testing.T) {
	plan := FailurePlan{Replica: "worker-1", Code: 137, Mode: FailOnce, OnceMarker: filepath.Join(t.TempDir(), "no-such-dir", "failed-once")}
	err := plan.Check("worker-1", log.New(&bytes.Buffer{}, "", 0))
	var injected *InjectedFailure
	// Failing on purpose without a marker would fail again in the next pod: the
	// run must fail for the real reason instead.
	if err == nil || errors.As(err, &injected) || !strings.Contains(err.Error(), EnvFailOnceMarker) {
		t.Errorf("got %v, want an error naming %s", err, EnvFailOnceMarker)
	}
}
