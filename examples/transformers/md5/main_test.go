package main

import (
	"crypto/md5"
	"encoding/hex"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

func TestMD5(t *testing.T) {
	s := transformertest.NewServer(t, digest)
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		got, err := s.Transform(t.Context(), m, o.Name, "", in)
		if err != nil {
			t.Fatal(err)
		}
		sum := md5.Sum(in)
		if want := hex.EncodeToString(sum[:]); string(got) != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}
