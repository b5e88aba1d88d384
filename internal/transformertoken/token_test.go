package transformertoken

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

var key1 = bytes.Repeat([]byte{1}, KeySize)

func TestDeriveIsDeterministicAndNamesItsKey(t *testing.T) {
	a := Derive("k1", key1, "ns", "t", "uid")
	if b := Derive("k1", key1, "ns", "t", "uid"); a != b {
		t.Fatalf("Derive is not deterministic: %q, %q", a, b)
	}
	if !strings.HasPrefix(a, "k1.") {
		t.Errorf("token %q does not start with its key ID", a)
	}
}

func TestDeriveDiffersInEveryInput(t *testing.T) {
	base := Derive("k1", key1, "ns", "t", "uid")
	for name, other := range map[string]string{
		"namespace": Derive("k1", key1, "ns2", "t", "uid"),
		"name":      Derive("k1", key1, "ns", "t2", "uid"),
		"uid":       Derive("k1", key1, "ns", "t", "uid2"),
		"key":       Derive("k1", bytes.Repeat([]byte{2}, KeySize), "ns", "t", "uid"),
	} {
		if other == base {
			t.Errorf("another %s gives the same token %q", name, base)
		}
	}
}

// A field's bytes cannot move into the next field: with the fields simply concatenated, or only
// separated by NUL bytes, some of these pairs would make the same token.
func TestDeriveSeparatesFields(t *testing.T) {
	for _, tc := range []struct{ a, b [3]string }{
		{[3]string{"a", "b\x00c", "u"}, [3]string{"a\x00b", "c", "u"}},
		{[3]string{"a", "b", "c\x00u"}, [3]string{"a", "b\x00c", "u"}},
		{[3]string{"ab", "c", "u"}, [3]string{"a", "bc", "u"}},
		{[3]string{"a", "bc", "u"}, [3]string{"a", "b", "cu"}},
	} {
		x := Derive("k1", key1, tc.a[0], tc.a[1], types.UID(tc.a[2]))
		y := Derive("k1", key1, tc.b[0], tc.b[1], types.UID(tc.b[2]))
		if x == y {
			t.Errorf("%q and %q make the same token", tc.a, tc.b)
		}
	}
}

func TestParsePicksTheHighestKeyAndIgnoresOtherEntries(t *testing.T) {
	s, err := Parse(map[string][]byte{"k2": key1, "k10": key1, "k9": key1, "..data": nil, "k0": nil, "kx": nil})
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := s.Current(); id != "k10" {
		t.Errorf("current key %s, want k10 (numbers, not strings, order the keys)", id)
	}
	if _, ok := s.Key("k0"); ok {
		t.Error("k0 is not a key ID")
	}
}

func TestParseRefusesShortKeysAndNoKeys(t *testing.T) {
	if _, err := Parse(map[string][]byte{"k1": []byte("short")}); err == nil || !strings.Contains(err.Error(), "k1 has 5 bytes") {
		t.Errorf("short key: %v", err)
	}
	if _, err := Parse(map[string][]byte{"other": key1}); !errors.Is(err, ErrNoKeys) {
		t.Errorf("no keys: %v, want ErrNoKeys", err)
	}
}

// writeVolume lays out dir as the kubelet does a Secret volume: the files in a timestamped
// directory, ..data linking to it, and each key a link through ..data; an update writes a new
// directory and swaps ..data.
func writeVolume(t *testing.T, dir, version string, data map[string][]byte) {
	t.Helper()
	ts := filepath.Join(dir, "..v"+version)
	if err := os.Mkdir(ts, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range data {
		if err := os.WriteFile(filepath.Join(ts, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil && !os.IsExist(err) {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	if err := os.Symlink("..v"+version, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestKeysReloadsWhenTheVolumeChanges(t *testing.T) {
	dir := t.TempDir()
	writeVolume(t, dir, "1", map[string][]byte{"k1": key1})
	k := NewKeys(dir)
	clock := time.Now()
	k.now = func() time.Time { return clock }
	got, err := k.Token("k1", "ns", "t", "uid")
	if err != nil {
		t.Fatal(err)
	}
	if want := Derive("k1", key1, "ns", "t", "uid"); got != want {
		t.Errorf("token %q, want %q", got, want)
	}
	if _, err := k.Token("k2", "ns", "t", "uid"); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("k2 before it exists: %v, want ErrUnknownKey", err)
	}

	// Rotation: k2 added, and k1 changed under the same ID (which no admin should do, but a
	// cached token must not outlive its key by more than recheckEvery). A new key ID is read at
	// once.
	key2, key1b := bytes.Repeat([]byte{2}, KeySize), bytes.Repeat([]byte{3}, KeySize)
	writeVolume(t, dir, "2", map[string][]byte{"k1": key1b, "k2": key2})
	if got, err := k.Token("k2", "ns", "t", "uid"); err != nil || got != Derive("k2", key2, "ns", "t", "uid") {
		t.Errorf("k2 after the update: %q, %v", got, err)
	}
	writeVolume(t, dir, "3", map[string][]byte{"k1": key1, "k2": key2})
	if got, _ := k.Token("k1", "ns", "t", "uid"); got != Derive("k1", key1b, "ns", "t", "uid") {
		t.Errorf("k1 within recheckEvery of the last check: %q, want the token of the key then read", got)
	}
	clock = clock.Add(recheckEvery)
	if got, _ := k.Token("k1", "ns", "t", "uid"); got != Derive("k1", key1, "ns", "t", "uid") {
		t.Errorf("k1 recheckEvery after the update is still the old key's token %q", got)
	}
}

func TestKeysSaysWhyTheDirectoryFails(t *testing.T) {
	k := NewKeys(filepath.Join(t.TempDir(), "missing"))
	if _, err := k.Token("k1", "ns", "t", "uid"); err == nil || !strings.Contains(err.Error(), "--transformer-key-dir") {
		t.Errorf("missing directory: %v, want an error naming the flag", err)
	}
	empty := t.TempDir()
	if _, err := NewKeys(empty).Token("k1", "ns", "t", "uid"); !errors.Is(err, ErrNoKeys) || !strings.Contains(err.Error(), SecretName) {
		t.Errorf("empty directory: %v, want ErrNoKeys naming the Secret", err)
	}
}
