package ws

import "testing"

func TestValidStatusLine(t *testing.T) {
	for line, want := range map[string]bool{
		"HTTP/1.1 101 Switching Protocols": true,
		"HTTP/1.0 404":                     true,
		"HTTP/1.1 101":                     true,
		"HTTP/1.1 101Switching":            false,
		"HTTP/2 101 Switching Protocols":   false,
		"HTTP/1.1 1x1 Switching":           false,
		"10\x00\x00\x7f\xfe\xd6\xd6":       false,
		"":                                 false,
	} {
		if got := validStatusLine([]byte(line)); got != want {
			t.Errorf("validStatusLine(%q) = %v, want %v", line, got, want)
		}
	}
}
