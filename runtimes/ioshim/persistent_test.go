package ioshim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mlkube/mlkube/sdk/ioframe"
	"github.com/mlkube/mlkube/sdk/transformer/transformertest"
)

// helperEnv makes the test binary a persistent io command (TestMain): it echoes each object,
// unless the object's arguments ask it to misbehave.
const helperEnv = "IOSHIM_TEST_PERSISTENT_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(persistentHelper())
	}
	os.Exit(m.Run())
}

func persistentHelper() int {
	err := ioframe.Serve(os.Stdin, os.Stdout, func(object, args string, in io.Reader, out io.Writer) error {
		switch args {
		case "pid":
			fmt.Fprint(out, os.Getpid())
		case "fail":
			return fmt.Errorf("no luck with %s", object)
		case "die":
			fmt.Fprintln(os.Stderr, "dying on purpose")
			os.Exit(3)
		case "garbage":
			io.Copy(io.Discard, in)
			os.Stdout.Write([]byte{0x7f, 0, 0, 0}) // a chunk far past the bound, written raw
			select {}                              // and no more
		case "early":
			// Fails the object before reading it, and exits: the rest of the object is not read.
			if err := ioframe.NewChunkWriter(os.Stdout).Fail("refused at once"); err != nil {
				return err
			}
			os.Exit(0)
		case "stall":
			select {} // reads nothing of a large object, and never answers
		case "hang":
			out.Write(make([]byte, 300<<10)) // past Serve's buffer: it reaches the shim
			select {}
		default:
			_, err := io.Copy(out, in) // streams: it writes while it reads
			return err
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// servePersistent serves the test binary as a persistent command through the shim.
func servePersistent(t *testing.T, concurrency int) *transformertest.Server {
	t.Helper()
	t.Setenv(helperEnv, "1")
	p, err := NewPersistent([]string{os.Args[0]}, concurrency, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return transformertest.NewServer(t, p.Transform)
}

func TestPersistentEveryMechanism(t *testing.T) {
	echoesEveryObject(t, servePersistent(t, 2))
}

// TestPersistentStreamsLargeObjects: an object far larger than a pipe's buffer, echoed as it is
// read, goes through whole; a shim writing the object before reading the result would deadlock.
func TestPersistentStreamsLargeObjects(t *testing.T) {
	s := servePersistent(t, 1)
	in := transformertest.Object{Name: "big", Size: 9<<20 + 3}.Bytes()
	got, err := s.Transform(t.Context(), transformertest.HPush, "big", "", in)
	if err != nil {
		t.Fatal(err)
	}
	transformertest.CheckBytes(t, got, in)
}

// pid asks the one command of a shim of concurrency 1 for its process ID.
func pid(t *testing.T, s *transformertest.Server) string {
	t.Helper()
	got, err := s.Transform(t.Context(), transformertest.HPush, "o", "pid", nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestPersistentCommandOutlivesItsObjects: one process serves object after object, and an
// object the command fails fails alone, with its message, on the same process.
func TestPersistentCommandOutlivesItsObjects(t *testing.T) {
	s := servePersistent(t, 1)
	first := pid(t, s)
	if again := pid(t, s); again != first {
		t.Fatalf("the second object ran in process %s, the first in %s; want one process", again, first)
	}
	_, err := s.Transform(t.Context(), transformertest.HPush, "x.bin", "fail", []byte("data"))
	if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || re.Message != "no luck with x.bin" {
		t.Fatalf("failed object: %v; want the command's message", err)
	}
	if after := pid(t, s); after != first {
		t.Errorf("after a failed object the process is %s, was %s; want it kept", after, first)
	}
}

// TestPersistentCommandReplacedWhenItBreaks: a command that exits, breaks the framing or runs
// past its object's end fails that object with why and is replaced; the next object works.
func TestPersistentCommandReplacedWhenItBreaks(t *testing.T) {
	s := servePersistent(t, 1)
	for args, want := range map[string]string{
		"die":     "died while transforming: exit status 3; stderr:\ndying on purpose",
		"garbage": "broken io framing: a chunk of 2130706432 bytes",
	} {
		before := pid(t, s)
		_, err := s.Transform(t.Context(), transformertest.HPush, "o", args, []byte("data"))
		if re, ok := errors.AsType[*transformertest.RemoteError](err); !ok || !strings.Contains(re.Message, want) {
			t.Errorf("%s: %v; want a message with %q", args, err, want)
		}
		if after := pid(t, s); after == before {
			t.Errorf("%s: process %s still serves; want a new one", args, after)
		}
	}
	before := pid(t, s)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		// The client leaves once the command has begun its answer, so once it has the object.
		done <- s.Do(ctx, transformertest.HPush, "o", "hang", []byte("data"), cancelOnWrite(cancel))
	}()
	if err := <-done; err == nil {
		t.Error("a hung object whose client left succeeded")
	}
	if after := pid(t, s); after == before {
		t.Errorf("hung command %s still serves; want a new one", after)
	}
}

// TestPersistentAbandonedResultKillsItsCommand: a result closed unread leaves its command's
// framing mid-object, so the command is replaced.
func TestPersistentAbandonedResultKillsItsCommand(t *testing.T) {
	t.Setenv(helperEnv, "1")
	p, err := NewPersistent([]string{os.Args[0]}, 1, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	read := func(args string, in []byte) []byte {
		r, err := p.Transform(t.Context(), bytes.NewReader(in), "o", args)
		if err != nil {
			t.Fatal(err)
		}
		defer r.(io.Closer).Close()
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := string(read("pid", nil))
	r, err := p.Transform(t.Context(), bytes.NewReader(make([]byte, 1<<20)), "o", "")
	if err != nil {
		t.Fatal(err)
	}
	r.(io.Closer).Close()
	if after := string(read("pid", nil)); after == before {
		t.Errorf("process %s served on after an abandoned result; want a new one", after)
	}
	if got := read("", []byte("fine")); string(got) != "fine" {
		t.Errorf("got %q after the replacement", got)
	}
}

// cancelOnWrite calls cancel at its first write.
type cancelOnWrite func()

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c()
	return len(p), nil
}

// TestWriteOnceNeverWaits: a write the pipe cannot take whole takes what fits and returns, so
// that Transform never waits on a command; the rest is the writer goroutine's.
func TestWriteOnceNeverWaits(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var size int
	if cerr := rc.Control(func(fd uintptr) {
		size, err = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 4096)
	}); cerr != nil || err != nil {
		t.Fatalf("set the pipe's size: %v, %v", cerr, err)
	}
	if n := writeOnce(w, make([]byte, 3*size)); n != size {
		t.Errorf("wrote %d bytes of %d into a pipe of %d; want what fits", n, 3*size, size)
	}
	if n := writeOnce(w, []byte("more")); n != 0 {
		t.Errorf("wrote %d bytes into a full pipe; want none", n)
	}
}

// TestPersistentCommandThatExitsEarlyIsNotReused: a command that answers an object before reading
// it and exits breaks the writing of the rest; that object fails, and the next one gets a new
// command rather than the dead one.
func TestPersistentCommandThatExitsEarlyIsNotReused(t *testing.T) {
	s := servePersistent(t, 1)
	for range 3 {
		_, err := s.Transform(t.Context(), transformertest.HPush, "o", "early", make([]byte, 4<<20))
		if err == nil {
			t.Fatal("an object the command refused succeeded")
		}
		if got, err := s.Transform(t.Context(), transformertest.HPush, "o", "", []byte("next")); err != nil || string(got) != "next" {
			t.Fatalf("the object after: %q, %v; want it served by a new command", got, err)
		}
	}
}
