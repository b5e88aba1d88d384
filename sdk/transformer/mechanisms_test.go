package transformer_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

func TestMechanismsRoundTrip(t *testing.T) {
	s := transformertest.NewServer(t, tagged)
	const args = "level=9&x y%"
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		got, err := s.Transform(t.Context(), m, o.Name, args, in)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, got, append([]byte(tag(o.Name, args)), in...))
	})
}

func TestHealth(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	resp, err := s.Client.Get(s.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Errorf("GET /health = %d %q, %v; want 200 ok", resp.StatusCode, body, err)
	}
}
