package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
)

// With HOSTILE set, testserver is a tenant's malicious transformer for the hostile-tenant tests
// (e2e/suite/tenants_test.go, issue 24): it answers the agent's health checks like a transformer
// and attacks every other request as HOSTILE says.
//
//	headers  answers every request (an hpush PUT, an hpull GET, a ws handshake) with a status line
//	         and then headers without end, up to maxBombBytes: an agent that read a transformer's
//	         answer headers without a bound would hold them all and pass its memory limit.
//	stall    an hpull transformer that takes its object's in-flight GET (?src=), reads one byte of
//	         it and then neither reads on nor closes it, and never answers: the agent's writes of
//	         the object block, and only its own deadlines end the object. A request without ?src=
//	         is never answered either.
const (
	modeHeaders = "headers"
	modeStall   = "stall"
)

// maxBombBytes bounds the headers of one answer in mode headers: far past the agent's 512 MiB
// memory limit, so that an unbounded reader is killed, yet finite, so that a pod whose peer
// somehow keeps reading does not write for ever.
const maxBombBytes = 2 << 30

// hostile is the handler of a mode; release, when closed, lets stalled requests go (tests only:
// in the pod it is never closed).
type hostile struct {
	mode    string
	release chan struct{}
}

func newHostile(mode string) (*hostile, error) {
	if mode != modeHeaders && mode != modeStall {
		return nil, fmt.Errorf("HOSTILE=%q: want %s or %s", mode, modeHeaders, modeStall)
	}
	return &hostile{mode: mode, release: make(chan struct{})}, nil
}

func (h *hostile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == wire.PathHealth {
		w.WriteHeader(http.StatusOK) // ready, so that the Transform runs and the agent calls it
		return
	}
	if h.mode == modeHeaders {
		endlessHeaders(w, r)
		return
	}
	h.stall(w, r)
}

// endlessHeaders takes the connection over and writes a status line (101 to a WebSocket
// handshake, else 200) and then 1 KiB header lines until the peer stops taking them.
func endlessHeaders(w http.ResponseWriter, r *http.Request) {
	status := "200 OK"
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		status = "101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade"
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 "+status+"\r\n"); err != nil {
		return
	}
	// 64 lines a write: one system call per 64 KiB.
	var chunk strings.Builder
	for i := range 64 {
		fmt.Fprintf(&chunk, "X-Bomb-%02d: %s\r\n", i, strings.Repeat("b", 1010))
	}
	for written := 0; written < maxBombBytes; written += chunk.Len() {
		if _, err := io.WriteString(conn, chunk.String()); err != nil {
			return // the peer refused more: what a bounded reader does
		}
	}
}

// stall holds the object's in-flight GET open and unread, and the agent's request unanswered.
func (h *hostile) stall(w http.ResponseWriter, r *http.Request) {
	src := r.URL.Query().Get(wire.QuerySrc)
	if src == "" {
		h.hold()
		return
	}
	// Not the request's context: the GET must outlive the agent's request, as a hostile
	// transformer's would, so that only the agent's own deadlines free it.
	resp, err := http.Get(src) //nolint:noctx // outlives the request on purpose, see above
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	var one [1]byte
	if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	h.hold()
}

func (h *hostile) hold() { <-h.release }
