package transformer

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCloseReason(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	got := closeReason(long)
	if len(got) > 123 || !utf8.ValidString(got) || !strings.HasPrefix(long, got) {
		t.Errorf("closeReason = %q (%d bytes)", got, len(got))
	}
	if got := closeReason("short"); got != "short" {
		t.Errorf("closeReason(short) = %q", got)
	}
}
