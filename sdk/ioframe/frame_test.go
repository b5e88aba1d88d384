package ioframe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// request frames one object as the shim does.
func request(t *testing.T, object, args string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteRequest(&b, object, args, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestServeAnswersEachObjectInOrder: objects of sizes around the chunk bound go through Serve
// and come back whole, an object's failure fails it alone, and the name and arguments arrive.
func TestServeAnswersEachObjectInOrder(t *testing.T) {
	sizes := []int{0, 1, MaxChunk - 1, MaxChunk, MaxChunk + 1, 3*MaxChunk + 7}
	var stdin bytes.Buffer
	for i, n := range sizes {
		stdin.Write(request(t, fmt.Sprintf("o%d", i), "a=1", bytes.Repeat([]byte{byte(i + 1)}, n)))
	}
	stdin.Write(request(t, "bad", "fail", []byte("half read")))
	stdin.Write(request(t, "after", "", []byte("still served")))
	var stdout bytes.Buffer
	err := Serve(&stdin, &stdout, func(object, args string, in io.Reader, out io.Writer) error {
		if args == "fail" {
			out.Write([]byte("partial"))
			return errors.New("no such thing in " + object)
		}
		if object != "after" && args != "a=1" {
			return fmt.Errorf("args %q", args)
		}
		_, err := io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	for i, n := range sizes {
		got, err := io.ReadAll(NewChunkReader(&stdout))
		if err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
		if want := bytes.Repeat([]byte{byte(i + 1)}, n); !bytes.Equal(got, want) {
			t.Fatalf("object %d: %d bytes back, want %d", i, len(got), n)
		}
	}
	got, err := io.ReadAll(NewChunkReader(&stdout))
	if oe, ok := errors.AsType[*ObjectError](err); !ok || oe.Message != "no such thing in bad" || string(got) != "partial" {
		t.Fatalf("failed object: %q, %v; want \"partial\" then its error", got, err)
	}
	if got, err := io.ReadAll(NewChunkReader(&stdout)); err != nil || string(got) != "still served" {
		t.Fatalf("object after a failure: %q, %v", got, err)
	}
	if stdout.Len() != 0 {
		t.Errorf("%d bytes left after the last answer", stdout.Len())
	}
}

// TestBrokenFramingIsAnError: each way a peer can break the framing is ErrFraming, never a
// short body taken for a whole one, and nothing past a bound is allocated.
func TestBrokenFramingIsAnError(t *testing.T) {
	u32 := func(n uint32) string { return string(binary.BigEndian.AppendUint32(nil, n)) }
	for name, body := range map[string]string{
		"ends before its end chunk": u32(3) + "abc",
		"ends inside a chunk":       u32(10) + "abc",
		"ends inside a length":      u32(3) + "abc" + "\x00\x00",
		"chunk past the bound":      u32(MaxChunk + 1),
		"error past the bound":      u32(errorMark) + u32(MaxField+1),
		"error cut short":           u32(errorMark) + u32(10) + "abc",
	} {
		_, err := io.ReadAll(NewChunkReader(strings.NewReader(body)))
		if !errors.Is(err, ErrFraming) {
			t.Errorf("%s: %v; want ErrFraming", name, err)
		}
		if truncated := strings.Contains(name, "ends") || strings.Contains(name, "short"); errors.Is(err, ErrTruncated) != truncated {
			t.Errorf("%s: %v; want ErrTruncated %v", name, err, truncated)
		}
	}
	for name, head := range map[string]string{
		"name past the bound": u32(MaxField + 1),
		"no arguments":        u32(1) + "o",
		"name cut short":      u32(5) + "o",
	} {
		if _, _, err := ReadRequestHeader(strings.NewReader(head)); !errors.Is(err, ErrFraming) {
			t.Errorf("%s: %v; want ErrFraming", name, err)
		}
	}
	if _, _, err := ReadRequestHeader(strings.NewReader("")); !errors.Is(err, io.EOF) {
		t.Errorf("an empty stream: %v; want io.EOF", err)
	}
	if err := WriteRequest(io.Discard, strings.Repeat("x", MaxField+1), "", strings.NewReader("")); err == nil {
		t.Error("a name past MaxField was written")
	}
}

// TestFailCutsTheMessage: an error's message past MaxField is cut, so that the reader, which
// refuses longer ones, still reads it.
func TestFailCutsTheMessage(t *testing.T) {
	var b bytes.Buffer
	if err := NewChunkWriter(&b).Fail(strings.Repeat("m", MaxField+10)); err != nil {
		t.Fatal(err)
	}
	_, err := io.ReadAll(NewChunkReader(&b))
	if oe, ok := errors.AsType[*ObjectError](err); !ok || len(oe.Message) != MaxField {
		t.Fatalf("got %v; want an ObjectError of %d bytes", err, MaxField)
	}
}

// FuzzChunkReader: whatever a command writes, the reader neither panics nor allocates past its
// bounds, and a body it reads whole is what writing those bytes again reads back.
func FuzzChunkReader(f *testing.F) {
	u32 := func(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }
	f.Add(append(append(u32(3), "abc"...), u32(0)...))
	f.Add(append(append(u32(errorMark), u32(2)...), "no"...))
	f.Add(u32(MaxChunk + 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := io.ReadAll(NewChunkReader(bytes.NewReader(b)))
		if err != nil {
			if _, ok := errors.AsType[*ObjectError](err); !ok && !errors.Is(err, ErrFraming) {
				t.Fatalf("error %v is neither an ObjectError nor ErrFraming", err)
			}
			return
		}
		var again bytes.Buffer
		w := NewChunkWriter(&again)
		if _, err := w.Write(got); err != nil {
			t.Fatal(err)
		}
		w.Close()
		back, err := io.ReadAll(NewChunkReader(&again))
		if err != nil || !bytes.Equal(back, got) {
			t.Fatalf("rewritten body read back as %d bytes, %v; want the %d bytes", len(back), err, len(got))
		}
	})
}
