package wire

import (
	"strings"
	"testing"
)

// TestMaxArgsFitsAControlMessage: a control message with the longest object
// name and args, and an fqn under the longest path a file system takes, is
// within MaxControlSize even when every byte is escaped (a control
// character becomes \u00XX, six bytes).
func TestMaxArgsFitsAControlMessage(t *testing.T) {
	const pathMax = 4096
	worst := func(n int) string { return strings.Repeat("\x01", n) }
	data, err := MarshalControl(Control{
		Object: worst(MaxObjectName),
		Args:   worst(MaxArgs),
		FQN:    worst(pathMax + 1 + MaxObjectName),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > MaxControlSize {
		t.Errorf("control message of %d bytes; MaxControlSize is %d", len(data), MaxControlSize)
	}
}
