package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

func TestGzipRoundTrip(t *testing.T) {
	s := transformertest.NewServer(t, transform)
	transformertest.ForEach(t, func(t *testing.T, m transformertest.Mechanism, o transformertest.Object) {
		in := o.Bytes()
		packed, err := s.Transform(t.Context(), m, o.Name, "", in)
		if err != nil {
			t.Fatal(err)
		}
		// The output is standard gzip...
		zr, err := gzip.NewReader(bytes.NewReader(packed))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, plain, in)
		// ...and the transformer reverses it.
		unpacked, err := s.Transform(t.Context(), m, o.Name, "decompress", packed)
		if err != nil {
			t.Fatal(err)
		}
		transformertest.CheckBytes(t, unpacked, in)
	})
}

func TestGzipBadRequests(t *testing.T) {
	s := transformertest.NewServer(t, transform)
	cases := map[string]struct {
		args string
		in   []byte
	}{
		"unknown args":        {args: "level=11", in: []byte("x")},
		"decompress non-gzip": {args: "decompress", in: []byte("not gzip")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Transform(t.Context(), transformertest.HPush, "o", tc.args, tc.in)
			re, ok := errors.AsType[*transformertest.RemoteError](err)
			if !ok || re.Status != http.StatusBadRequest {
				t.Errorf("error = %v, want status 400", err)
			}
		})
	}
}
