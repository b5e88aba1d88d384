package main

import (
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

func TestEcho(t *testing.T) {
	s := transformertest.NewServer(t, echo)
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		got, err := s.Transform(t.Context(), m, o.Name, "", in)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, got, in)
	})
}
