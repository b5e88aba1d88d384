package fuzzbytes

import "testing"

func TestStream(t *testing.T) {
	s := Stream{7, 1}
	if got := Pick(&s, "a", "b", "c"); got != "b" { // 7 % 3
		t.Errorf("Pick = %q, want b", got)
	}
	if got := s.Next(); got != 1 {
		t.Errorf("Next = %d, want 1", got)
	}
	if got := s.Next(); got != 0 {
		t.Errorf("Next past the end = %d, want 0", got)
	}
}
