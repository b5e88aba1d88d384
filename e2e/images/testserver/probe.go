package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// A probe must answer well inside the API server's proxy timeout, so the test sees our error. Each
// fetch opens a new connection: a kept-alive one would pin every request to the Service backend
// the first one reached, and a test of load balancing or traffic policy would see only that one.
var probeClient = &http.Client{
	Timeout:   5 * time.Second,
	Transport: &http.Transport{DisableKeepAlives: true},
}

// fetch relays what ?url= answers, its status code and body, to a GET, or
// to a POST of this request's body (JSON). ?method= sends another method
// (with no body), and each ?header=Name:value adds a header, so that a test
// can send what a hostile client would (a WebSocket upgrade, a forged
// credential). With TOKEN_FILE set (a projected ServiceAccount token for the
// node data path) the request carries the token as a bearer token, unless
// ?token=none.
func fetch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	method, body := r.Method, io.Reader(r.Body)
	if m := q.Get("method"); m != "" {
		method, body = m, nil
	}
	req, err := http.NewRequestWithContext(r.Context(), method, q.Get("url"), body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range q["header"] {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			http.Error(w, "header "+h+" is not Name:value", http.StatusBadRequest)
			return
		}
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if file := os.Getenv("TOKEN_FILE"); file != "" && r.URL.Query().Get("token") != "none" {
		// Read per request: the kubelet replaces the token before it expires.
		token, err := os.ReadFile(file)
		if err != nil {
			http.Error(w, "reading the token: "+err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, 1<<20))
}

// lookup answers the addresses cluster DNS gives for ?name=.
func lookup(w http.ResponseWriter, r *http.Request) {
	addrs, err := net.DefaultResolver.LookupHost(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	writeJSON(w, addrs)
}

// canary counts the requests to /canary/…: a test points something at this pod and then asks
// GET /canary-count whether it came.
type canary struct{ hits atomic.Int64 }

func (c *canary) register(mux *http.ServeMux) {
	mux.HandleFunc("/canary/", func(w http.ResponseWriter, _ *http.Request) {
		c.hits.Add(1)
		_, _ = io.WriteString(w, "canary")
	})
	mux.HandleFunc("GET /canary-count", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strconv.FormatInt(c.hits.Load(), 10))
	})
}
