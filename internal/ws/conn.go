// Package ws is the WebSocket (RFC 6455, no extensions) that carries the ws
// mechanism of the data path, written for its traffic: many small messages
// in flight on one connection, and objects of any size streamed through.
//
// Writes go into a buffer that a flusher goroutine sends whenever the
// connection is free, so the messages written while a send is under way
// leave together in one system call: under load a connection batches by
// itself, and when idle a message leaves at once, with no timer and no
// message held back. General-purpose libraries flush every message (and
// write client frames through a 4 KiB buffer), which makes a 4 KiB object
// cost several system calls per hop.
//
// Reading is for one goroutine at a time; writing is safe from several,
// with LockWrite keeping a sequence of messages together.
//
// A peer that stops reading would hold a writer, and the buffers behind it,
// for ever: SetWriteTimeout bounds each write, and a write that times out
// closes the connection. Ping sends a ping, which the peer's reader answers;
// pings received are answered by NextReader.
package ws

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// readBufferSize lets one read system call take in many small frames.
	readBufferSize = 64 << 10
	// writeBufferSize is the most that is batched into one write, and the
	// size of every write. Measured on loopback, 64 KiB writes (or sending
	// large payloads straight from the caller's bytes) cost more than the
	// copy they save: the peer is woken less evenly and both sides stall on
	// a full socket (BenchmarkDataPath: a 1 MiB object at 0.77x the bare
	// chain with 64 KiB writes, 0.95-1.0x with 32 KiB).
	writeBufferSize = 32 << 10
	// minFrame is the least a streamed frame carries, but the last.
	minFrame = 16 << 10
	// directRead is the read size from which a payload is read straight
	// from the socket when nothing is buffered.
	directRead = 16 << 10
	// closeGrace is how long Close waits for the peer's close frame.
	closeGrace = 5 * time.Second
)

// Conn is one WebSocket connection.
type Conn struct {
	nc     net.Conn
	client bool // a client masks its frames; a server expects masked frames

	// Read side, owned by the reading goroutine.
	sock  *socketReader
	br    *bufio.Reader
	frame header // the data frame being read
	left  int64  // its payload bytes not yet read
	pos   int    // the mask key position of the next payload byte
	inMsg bool   // a data message is being read
	cur   *messageReader
	rerr  error // sticky: the read side is over

	// msgMu keeps the messages of one writer together: data frames of
	// different messages must not interleave.
	msgMu sync.Mutex
	// mu guards the write buffers. Control frames take only mu: they may
	// go between the frames of a message.
	mu    sync.Mutex
	wbuf  []byte // being filled
	spare []byte // the other buffer; nil while the flusher sends it
	werr  error  // sticky: the write side is over
	rng   *mrand.ChaCha8
	// sendMu orders the writes to the socket; it is taken with mu held.
	sendMu  sync.Mutex
	flushes chan struct{} // wakes the flusher
	// writeTimeout bounds each write to the socket; 0 is none.
	writeTimeout atomic.Int64

	closeSent atomic.Bool
	// closed is set by CloseNow; bytes read after it are not delivered.
	closed    atomic.Bool
	closeOnce sync.Once
	done      chan struct{}
}

// newConn starts a connection on nc after the handshake; early is what the
// handshake read from nc beyond its own bytes.
func newConn(nc net.Conn, early []byte, client bool) *Conn {
	sock := newSocketReader(nc)
	var src io.Reader = sock
	if len(early) > 0 {
		src = io.MultiReader(bytes.NewReader(early), sock)
	}
	c := &Conn{
		nc:      nc,
		client:  client,
		sock:    sock,
		br:      bufio.NewReaderSize(src, readBufferSize),
		wbuf:    make([]byte, 0, writeBufferSize),
		spare:   make([]byte, 0, writeBufferSize),
		flushes: make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	if client {
		var seed [32]byte
		rand.Read(seed[:])
		c.rng = mrand.NewChaCha8(seed)
	}
	go c.flusher()
	return c
}

// MessageType is a data message's kind.
type MessageType int

const (
	Text   MessageType = MessageType(opText)
	Binary MessageType = MessageType(opBinary)
)

// NextReader returns the next data message, answering the control frames
// before it. The previous message is skipped if it was not read to its end.
// After an error the connection is closed (a close frame from the peer is
// a *CloseError).
func (c *Conn) NextReader() (MessageType, io.Reader, error) {
	if c.rerr != nil {
		return 0, nil, c.rerr
	}
	if c.inMsg {
		if _, err := io.Copy(io.Discard, c.cur); err != nil {
			return 0, nil, err
		}
	}
	h, err := c.nextDataFrame()
	if err != nil {
		return 0, nil, err
	}
	if h.op == opContinuation {
		return 0, nil, c.failRead(protocolError("continuation frame without a message"))
	}
	c.inMsg = true
	c.cur = &messageReader{c: c}
	return MessageType(h.op), c.cur, nil
}

// nextDataFrame reads frame headers, handling control frames, until a data
// frame starts.
func (c *Conn) nextDataFrame() (header, error) {
	for {
		h, err := readHeader(c.br, !c.client)
		if err == nil && c.closed.Load() {
			err = ErrClosed
		}
		if err != nil {
			return header{}, c.failRead(err)
		}
		if !h.op.control() {
			c.frame, c.left, c.pos = h, h.length, 0
			return h, nil
		}
		if err := c.handleControl(h); err != nil {
			return header{}, c.failRead(err)
		}
	}
}

// handleControl reads a control frame's payload and acts on it.
func (c *Conn) handleControl(h header) error {
	var buf [maxControlPayload]byte
	p := buf[:h.length]
	if _, err := io.ReadFull(c.br, p); err != nil {
		return unexpected(err)
	}
	if h.masked {
		maskCopy(p, p, h.key, 0)
	}
	switch h.op {
	case opPing:
		return c.writeControl(opPong, p)
	case opPong:
		return nil
	}
	ce := &CloseError{Code: StatusNoStatusRcvd}
	switch {
	case len(p) == 1:
		return protocolError("close frame with a one-byte payload")
	case len(p) >= 2:
		ce.Code, ce.Reason = StatusCode(binary.BigEndian.Uint16(p)), string(p[2:])
	}
	// Answer with the same status, unless this side started the closing.
	if c.closeSent.CompareAndSwap(false, true) {
		echo := p
		if ce.Code == StatusNoStatusRcvd {
			echo = nil
		}
		// Best effort: the peer is closing anyway, and the read reports ce
		// whether or not the echo goes out (a failed write is kept as the
		// write side's error).
		_ = c.writeControl(opClose, echo)
	}
	return ce
}

// failRead ends the read side for err and closes the connection; a
// protocol error is first reported to the peer.
func (c *Conn) failRead(err error) error {
	if c.rerr != nil {
		return c.rerr
	}
	if pe, ok := errors.AsType[*ProtocolError](err); ok {
		c.Close(StatusProtocolError, pe.Reason)
	}
	c.rerr = err
	c.CloseNow()
	return err
}

// messageReader reads one data message across its frames.
type messageReader struct {
	c   *Conn
	eof bool
}

func (m *messageReader) Read(p []byte) (int, error) {
	c := m.c
	if m.eof {
		return 0, io.EOF
	}
	if c.rerr != nil {
		return 0, c.rerr
	}
	for c.left == 0 {
		if c.frame.fin {
			m.end()
			return 0, io.EOF
		}
		h, err := c.nextDataFrame()
		if err != nil {
			return 0, err
		}
		if h.op != opContinuation {
			return 0, c.failRead(protocolError("data frame inside a fragmented message"))
		}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	var n int
	var err error
	if len(p) >= directRead && c.br.Buffered() == 0 {
		// Large and nothing buffered: straight into p, one copy less.
		n, err = c.sock.Read(p)
	} else {
		n, err = c.br.Read(p)
	}
	if c.closed.Load() {
		// The socket may be being drained by CloseNow.
		return 0, c.failRead(ErrClosed)
	}
	if c.frame.masked {
		c.pos = maskCopy(p[:n], p[:n], c.frame.key, c.pos)
	}
	c.left -= int64(n)
	if err != nil {
		return n, c.failRead(unexpected(err))
	}
	if c.left == 0 && c.frame.fin {
		m.end()
		return n, io.EOF
	}
	return n, nil
}

func (m *messageReader) end() {
	m.eof = true
	m.c.inMsg = false
}
