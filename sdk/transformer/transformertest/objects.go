package transformertest

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
)

// Object is a test object: a name and a size.
type Object struct {
	Name string
	Size int
}

// Objects cover the sizes around the SDK's 32 KiB copy buffer, one object
// over 8 MiB, and names with slashes, spaces, "%" and names that look like
// the transformer's own paths.
var Objects = []Object{
	{"empty", 0},
	{"one", 1},
	{"buffer-sized", 32 << 10},
	{"buffer-and-one", 32<<10 + 1},
	{"large/9MiB object", 9 << 20},
	{"dir/sub/file.bin", 100},
	{"with space and 100%", 100},
	{"%2F/a b/%zz?x#y", 100},
	{"a/./../b", 100},
	{"/leading//and-trailing/", 100},
	{"health", 100},
	{"ws", 100},
}

// Bytes returns the object's content: reproducible pseudo-random bytes.
func (o Object) Bytes() []byte {
	b := make([]byte, o.Size)
	_, _ = rand.NewChaCha8([32]byte{byte(o.Size)}).Read(b) // ChaCha8.Read always fills b and returns nil
	return b
}

// ForEach runs f as a subtest for every mechanism and object.
func ForEach(t *testing.T, f func(t *testing.T, m Mechanism, o Object)) {
	for _, m := range Mechanisms {
		for _, o := range Objects {
			t.Run(string(m)+"/"+o.Name, func(t *testing.T) { f(t, m, o) })
		}
	}
}

// CheckBytes fails t when got differs from want, reporting sizes and hashes
// rather than megabytes of content.
func CheckBytes(t testing.TB, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("result differs: %d bytes, sha256 %x; want %d bytes, sha256 %x",
			len(got), sha256.Sum256(got), len(want), sha256.Sum256(want))
	}
}
