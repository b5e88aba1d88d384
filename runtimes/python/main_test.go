package python

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/runtimes/runtimetest"
)

// TestMainFailsAtStart: a configuration or source at fault ends the runtime before it serves,
// with status 1 and a message naming the variable.
func TestMainFailsAtStart(t *testing.T) {
	python := python311(t)
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"no source":  {map[string]string{}, "MLKUBE_CODE_SOURCE is empty"},
		"bad chunk":  {map[string]string{EnvSource: "def transform(b): return b", EnvChunkSize: "-4"}, "MLKUBE_CODE_CHUNK_SIZE"},
		"bad source": {map[string]string{EnvSource: "def transform(b) return b"}, "MLKUBE_CODE_SOURCE does not compile"},
		"no function": {map[string]string{EnvSource: "def transform(b): return b", EnvFunction: "handle"},
			"MLKUBE_CODE_SOURCE defines no 'handle'"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, k := range []string{EnvSource, EnvFunction, EnvDependencies, EnvChunkSize} {
				t.Setenv(k, tc.env[k])
			}
			var stderr bytes.Buffer
			if code := Main([]string{"--python", python, "--workers", "1"}, &stderr); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// An object without the node agent's credential never reaches a Python worker.
func TestMainRefusesWithoutCredential(t *testing.T) {
	python := python311(t)
	marker := filepath.Join(t.TempDir(), "ran")
	t.Setenv(EnvSource, "def transform(b):\n    open("+strconv.Quote(marker)+", 'w').close()\n    return b\n")
	for _, k := range []string{EnvFunction, EnvDependencies, EnvChunkSize} {
		t.Setenv(k, "")
	}
	runtimetest.MainRefusesWithoutCredential(t, func() int {
		return Main([]string{"--python", python, "--workers", "1"}, os.Stderr)
	})
	if _, err := os.Stat(marker); err == nil {
		t.Error("a worker ran the function for an unauthenticated object")
	}
}
