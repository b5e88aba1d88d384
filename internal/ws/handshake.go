package ws

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// acceptGUID is the constant the handshake hashes with the client's key.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// HandshakeError is a server that refused the upgrade; Body is the start of
// its answer, which says why.
type HandshakeError struct {
	Status int
	Body   string
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("ws handshake: %d %s: %s", e.Status, http.StatusText(e.Status), e.Body)
}

// Dial opens a connection to a ws:// URL. ctx bounds the handshake only.
func Dial(ctx context.Context, rawURL string) (*Conn, error) {
	return DialHeader(ctx, rawURL, nil)
}

// DialHeader is Dial with header added to the handshake request (a bearer token).
func DialHeader(ctx context.Context, rawURL string, header http.Header) (*Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("ws dial: %w", err)
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("ws dial %s: scheme %q is not ws", rawURL, u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("ws dial %s: %w", rawURL, err)
	}
	c, err := clientHandshake(ctx, nc, u, header)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("ws dial %s: %w", rawURL, err)
	}
	return c, nil
}

func clientHandshake(ctx context.Context, nc net.Conn, u *url.URL, header http.Header) (*Conn, error) {
	// A context that ends interrupts the handshake's reads and writes.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host +
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
		"\r\nSec-WebSocket-Version: 13\r\n"
	var extra strings.Builder
	_ = header.Write(&extra) // a strings.Builder takes every write
	req += extra.String() + "\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		return nil, handshakeFailed(ctx, err)
	}
	br := newAnswerReader(nc)
	if err := readAnswer(br, key); err != nil {
		return nil, handshakeFailed(ctx, err)
	}
	if !stop() {
		return nil, ctx.Err()
	}
	return newConn(nc, buffered(br), true), nil
}

// A handshake answer's status line and headers must end, with their blank
// line, within maxHandshakeBytes and maxHandshakeLines: a server that sends
// headers without end (a tenant's transformer, for the node agent) is
// refused once it passes either, having had the client read and hold no
// more than maxHandshakeBytes of it. Lines are bounded apart because each
// header costs more to parse than its bytes. A real answer is a few hundred
// bytes in a handful of lines.
const (
	maxHandshakeBytes = 16 << 10
	maxHandshakeLines = 64
)

// ErrHandshakeTooLarge is a handshake answer whose status line and headers
// pass maxHandshakeBytes or maxHandshakeLines; the error says which.
var ErrHandshakeTooLarge = errors.New("ws handshake: the server's answer is too large")

// newAnswerReader is the buffer the answer is read through: it holds a
// whole head within the bounds.
func newAnswerReader(nc io.Reader) *bufio.Reader {
	return bufio.NewReaderSize(nc, maxHandshakeBytes)
}

// readAnswer reads the server's answer to the handshake of key from br (of
// newAnswerReader) and checks that it upgrades the connection. What
// follows the answer stays in br: frames the server sent right behind it.
func readAnswer(br *bufio.Reader, key string) error {
	if err := bufferHead(br); err != nil {
		return err
	}
	if err := checkStatusLine(br); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		return &HandshakeError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	}
	if !headerHas(resp.Header, "Upgrade", "websocket") || !headerHas(resp.Header, "Connection", "upgrade") {
		return errors.New("server answered 101 without upgrading to websocket")
	}
	if resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(key) {
		return errors.New("server answered a wrong Sec-WebSocket-Accept")
	}
	return nil
}

// bufferHead reads into br, without consuming it, the answer's status line
// and headers up to the blank line that ends them, or fails once they pass
// the bounds: http.ReadResponse then parses them from br's buffer alone.
func bufferHead(br *bufio.Reader) error {
	pos, lines := 0, 0 // the start of the line being looked for, and the lines before it
	for {
		buf, _ := br.Peek(br.Buffered()) // what is buffered: never fails
		for {
			i := bytes.IndexByte(buf[pos:], '\n')
			if i < 0 {
				break
			}
			line := buf[pos : pos+i+1]
			pos, lines = pos+i+1, lines+1
			if string(line) == "\r\n" || string(line) == "\n" {
				return nil
			}
			if lines == maxHandshakeLines {
				return fmt.Errorf("%w: more than %d lines of status line and headers, the limit", ErrHandshakeTooLarge, maxHandshakeLines)
			}
		}
		if len(buf) >= maxHandshakeBytes {
			return fmt.Errorf("%w: more than %d bytes of status line and headers, the limit", ErrHandshakeTooLarge, maxHandshakeBytes)
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// checkStatusLine refuses an answer whose buffered head does not begin with "HTTP/1.x NNN":
// net/http would quote a malformed status line whole in its error (%q, up to four bytes a byte),
// an allocation many times the head's bound; this error quotes a short prefix only.
func checkStatusLine(br *bufio.Reader) error {
	head, _ := br.Peek(br.Buffered()) // what is buffered: never fails
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	if validStatusLine(line) {
		return nil
	}
	return fmt.Errorf("ws handshake: the server's answer does not begin with an HTTP/1.x status line: %q", line[:min(len(line), 32)])
}

// validStatusLine: "HTTP/1.", a digit, a space, three digits, then the end or a space.
func validStatusLine(line []byte) bool {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return false
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(line) == 12 || line[12] == ' '
}

func handshakeFailed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Accept upgrades an HTTP request to a connection. A request that is not a
// WebSocket upgrade is answered with an error status, and err says why. The
// request's headers were read by the http.Server, within its MaxHeaderBytes.
func Accept(w http.ResponseWriter, r *http.Request) (*Conn, error) {
	key, status, err := checkUpgrade(r)
	if err != nil {
		if status == http.StatusUpgradeRequired {
			w.Header().Set("Connection", "Upgrade")
			w.Header().Set("Upgrade", "websocket")
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		http.Error(w, err.Error(), status)
		return nil, err
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "ws: cannot take over the connection", http.StatusInternalServerError)
		return nil, fmt.Errorf("ws accept: %w", err)
	}
	// The server's deadlines for reading the request no longer apply.
	nc.SetDeadline(time.Time{})
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		acceptKey(key) + "\r\n\r\n"
	if _, err := io.WriteString(nc, resp); err != nil {
		nc.Close()
		return nil, fmt.Errorf("ws accept: %w", err)
	}
	// The client may have sent frames right behind its request.
	return newConn(nc, buffered(brw.Reader), false), nil
}

// buffered returns a copy of what br holds unread.
func buffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return bytes.Clone(b)
}

// checkUpgrade checks that r asks for a WebSocket and returns its key, or
// the status to refuse it with.
func checkUpgrade(r *http.Request) (key string, status int, err error) {
	switch {
	case r.Method != http.MethodGet:
		return "", http.StatusMethodNotAllowed, fmt.Errorf("ws: method %s, want GET", r.Method)
	case !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket"):
		return "", http.StatusUpgradeRequired, errors.New("ws: not a WebSocket upgrade (Connection: Upgrade, Upgrade: websocket)")
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return "", http.StatusUpgradeRequired, errors.New("ws: Sec-WebSocket-Version must be 13")
	}
	key = r.Header.Get("Sec-WebSocket-Key")
	if nonce, err := base64.StdEncoding.DecodeString(key); err != nil || len(nonce) != 16 {
		return "", http.StatusBadRequest, errors.New("ws: Sec-WebSocket-Key is not 16 bytes in base64")
	}
	return key, 0, nil
}

// headerHas reports whether a comma-separated header lists token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
