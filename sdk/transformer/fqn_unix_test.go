//go:build unix

package transformer_test

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// A FIFO under the root must be refused, not waited on for a writer.
func TestFQNRefusesFIFO(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	fifo := filepath.Join(s.FQNRoot, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	for _, m := range fqnMechanisms {
		_, err := transform(t, s, m, fifo)
		if re := remote(t, err); m != transformertest.WSFQN && re.Status != http.StatusBadRequest {
			t.Errorf("%s: status = %d (%q), want 400", m, re.Status, re.Message)
		}
	}
}
