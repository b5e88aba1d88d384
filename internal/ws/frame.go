package ws

import (
	"bufio"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

// opcode is a frame's kind (RFC 6455 section 5.2).
type opcode byte

const (
	opContinuation opcode = 0x0
	opText         opcode = 0x1
	opBinary       opcode = 0x2
	opClose        opcode = 0x8
	opPing         opcode = 0x9
	opPong         opcode = 0xA
)

func (op opcode) control() bool { return op&0x8 != 0 }

const (
	finBit  = 0x80
	rsvBits = 0x70
	maskBit = 0x80
	// maxHeaderSize is a frame header with a 64-bit length and a mask key.
	maxHeaderSize = 14
	// maxControlPayload is the most a control frame may carry.
	maxControlPayload = 125
)

// header is one frame's header.
type header struct {
	fin    bool
	op     opcode
	masked bool
	key    [4]byte
	length int64
}

// appendHeader appends the encoding of h to b.
func appendHeader(b []byte, h header) []byte {
	first := byte(h.op)
	if h.fin {
		first |= finBit
	}
	var second byte
	if h.masked {
		second = maskBit
	}
	switch {
	case h.length <= 125:
		b = append(b, first, second|byte(h.length))
	case h.length <= 0xFFFF:
		b = append(b, first, second|126)
		b = binary.BigEndian.AppendUint16(b, uint16(h.length))
	default:
		b = append(b, first, second|127)
		b = binary.BigEndian.AppendUint64(b, uint64(h.length))
	}
	if h.masked {
		b = append(b, h.key[:]...)
	}
	return b
}

// readHeader reads one frame header and checks what every frame must
// satisfy; wantMasked is whether the peer must mask (it is a client).
func readHeader(r *bufio.Reader, wantMasked bool) (header, error) {
	b, err := take(r, 2)
	if err != nil {
		return header{}, err
	}
	h := header{fin: b[0]&finBit != 0, op: opcode(b[0] & 0x0F), masked: b[1]&maskBit != 0}
	if b[0]&rsvBits != 0 {
		return header{}, protocolError("reserved bits set without an extension")
	}
	switch h.op {
	case opContinuation, opText, opBinary, opClose, opPing, opPong:
	default:
		return header{}, protocolError(fmt.Sprintf("unknown opcode %#x", byte(h.op)))
	}
	if h.masked != wantMasked {
		if wantMasked {
			return header{}, protocolError("client frame not masked")
		}
		return header{}, protocolError("server frame masked")
	}
	switch n := b[1] &^ maskBit; n {
	case 126:
		if b, err = take(r, 2); err != nil {
			return header{}, unexpected(err)
		}
		h.length = int64(binary.BigEndian.Uint16(b))
	case 127:
		if b, err = take(r, 8); err != nil {
			return header{}, unexpected(err)
		}
		l := binary.BigEndian.Uint64(b)
		if l>>63 != 0 {
			return header{}, protocolError("frame length over 2^63")
		}
		h.length = int64(l)
	default:
		h.length = int64(n)
	}
	if h.op.control() && (!h.fin || h.length > maxControlPayload) {
		return header{}, protocolError("fragmented or oversized control frame")
	}
	if h.masked {
		if b, err = take(r, 4); err != nil {
			return header{}, unexpected(err)
		}
		h.key = [4]byte(b)
	}
	return h, nil
}

// take reads n bytes, valid until the next read: reading through Peek
// spares a copy and an allocation per frame.
func take(r *bufio.Reader, n int) ([]byte, error) {
	b, err := r.Peek(n)
	if len(b) < n {
		if err == io.EOF && len(b) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r.Discard(n)
	return b, nil
}

// unexpected turns the end of the stream inside a frame into an error.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// maskCopy writes src XOR the mask key into dst (which may be src itself),
// starting at byte pos of the key, and returns the key position after it.
// Masking runs on every byte of every client frame, so long runs go through
// crypto/subtle's vectorised XOR against a block of repeated key.
func maskCopy(dst, src []byte, key [4]byte, pos int) int {
	dst = dst[:len(src)]
	if len(src) >= maskBlock {
		var pattern [maskBlock]byte
		for i := range pattern {
			pattern[i] = key[(pos+i)&3]
		}
		// maskBlock is a multiple of 4: every block starts at pos.
		for len(src) >= maskBlock {
			subtle.XORBytes(dst[:maskBlock], src[:maskBlock], pattern[:])
			dst, src = dst[maskBlock:], src[maskBlock:]
		}
	}
	k32 := binary.LittleEndian.Uint32(key[:])
	k32 = bits.RotateLeft32(k32, -8*(pos&3))
	k64 := uint64(k32) | uint64(k32)<<32
	i := 0
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(src[i:])^k64)
	}
	for ; i < len(src); i++ {
		dst[i] = src[i] ^ key[(pos+i)&3]
	}
	return (pos + len(src)) & 3
}

// maskBlock is the run masked at once with a block of key.
const maskBlock = 512
