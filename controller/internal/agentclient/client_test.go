package agentclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestDoTellsAnswersApart: a 2xx answer is decoded, a 401 is a refusal, any other answer is a
// StatusError carrying the agent's reason, and the token travels as a bearer token.
func TestDoTellsAnswersApart(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.Header.Get("Authorization") != "Bearer tok":
			w.WriteHeader(http.StatusUnauthorized)
		case req.URL.Path == "/ok":
			_, _ = w.Write([]byte(`{"n":7}`))
		default:
			http.Error(w, "no such run", http.StatusNotFound)
		}
	}))
	defer s.Close()
	ctx := context.Background()
	var out struct{ N int }
	if err := Do(ctx, s.Client(), http.MethodPut, s.URL+"/ok", "tok", map[string]int{"x": 1}, &out); err != nil || out.N != 7 {
		t.Errorf("Do = %v, %+v; want n 7", err, out)
	}
	err := Do(ctx, s.Client(), http.MethodGet, s.URL+"/ok", "wrong", nil, nil)
	if !errors.Is(err, ErrRefused) {
		t.Errorf("401 gave %v; want a refusal", err)
	}
	err = Do(ctx, s.Client(), http.MethodGet, s.URL+"/gone", "tok", nil, nil)
	var se *StatusError
	if !HasStatus(err, http.StatusNotFound) || !errors.As(err, &se) || se.Message != "no such run" || errors.Is(err, ErrRefused) {
		t.Errorf("404 gave %v; want a StatusError saying no such run", err)
	}
}
