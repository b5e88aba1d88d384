//go:build unix

package h1client

import (
	"net"
	"syscall"
)

// peerSilent peeks at nc without blocking: an idle keep-alive connection
// has nothing to read. A closed one reads end of file; one with bytes
// waiting carries an answer no request asked for. Either ends it. One
// system call saves a request sent into a closed connection.
func peerSilent(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	silent := false
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		silent = n < 0 && (err == syscall.EAGAIN || err == syscall.EWOULDBLOCK)
		return true
	})
	return err == nil && silent
}
