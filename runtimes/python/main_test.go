package python

import (
	"bytes"
	"strings"
	"testing"
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
