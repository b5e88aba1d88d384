package transformer

import "testing"

func TestListenAddr(t *testing.T) {
	if got := listenAddr(""); got != ":8000" {
		t.Errorf(`listenAddr("") = %q`, got)
	}
	if got := listenAddr("9090"); got != ":9090" {
		t.Errorf(`listenAddr("9090") = %q`, got)
	}
}
