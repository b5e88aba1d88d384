package clitest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t unless a command that ran in e exited with wantCode and wrote exactly wantOut and
// wantErr: the plugins' table tests all check a run the same way.
func (e *Env) Check(t testing.TB, code, wantCode int, wantOut, wantErr string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code %d, want %d", code, wantCode)
	}
	if diff := cmp.Diff(wantOut, e.Stdout.String()); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantErr, e.Stderr.String()); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
}
