package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// helloSource is the package mlkubehello. Its greet names the package and version in a
// transformer's answer, so a test that sees the answer knows the dependency was installed and
// imported.
const helloSource = `"""mlkubehello: the e2e suite's dependency, served by the testserver's package index."""

__version__ = "1.0.0"


def greet(data):
    return b"hello from mlkubehello " + __version__.encode() + b": " + bytes(data)
`

// wheel is a built wheel: its file name (PEP 427), bytes and their hex sha256.
type wheel struct {
	project, filename string
	data              []byte
	sha256            string
}

// helloWheel is mlkubehello 1.0.0, the one wheel the index serves.
func helloWheel() wheel {
	w, err := buildWheel("mlkubehello", "1.0.0", map[string]string{"mlkubehello/__init__.py": helloSource})
	if err != nil {
		panic(err) // only writes to memory, of fixed names and contents
	}
	return w
}

// wheelTime is every entry's time, so the same files make the same wheel, and the same digest.
var wheelTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// buildWheel packs a pure-Python wheel of project version holding files (path in the wheel →
// content) and the .dist-info pip reads: METADATA (name and version), WHEEL (a py3-none-any
// purelib wheel) and RECORD, the sha256 and size of every other file, as pip checks them.
func buildWheel(project, version string, files map[string]string) (wheel, error) {
	dist := strings.ReplaceAll(project, "-", "_")
	info := fmt.Sprintf("%s-%s.dist-info/", dist, version)
	all := maps.Clone(files)
	all[info+"METADATA"] = fmt.Sprintf("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: built by the mlkube e2e testserver\n", project, version)
	all[info+"WHEEL"] = "Wheel-Version: 1.0\nGenerator: mlkube-testserver\nRoot-Is-Purelib: true\nTag: py3-none-any\n"

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record bytes.Buffer
	rw := csv.NewWriter(&record)
	for _, name := range slices.Sorted(maps.Keys(all)) {
		if err := addToZip(zw, name, all[name]); err != nil {
			return wheel{}, err
		}
		_ = rw.Write([]string{name, recordHash([]byte(all[name])), strconv.Itoa(len(all[name]))})
	}
	// RECORD cannot hold its own digest: it lists itself with none.
	_ = rw.Write([]string{info + "RECORD", "", ""})
	rw.Flush()
	if err := rw.Error(); err != nil {
		return wheel{}, err
	}
	if err := addToZip(zw, info+"RECORD", record.String()); err != nil {
		return wheel{}, err
	}
	if err := zw.Close(); err != nil {
		return wheel{}, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return wheel{
		project:  normalizeProject(project),
		filename: fmt.Sprintf("%s-%s-py3-none-any.whl", dist, version),
		data:     buf.Bytes(),
		sha256:   hex.EncodeToString(sum[:]),
	}, nil
}

func addToZip(zw *zip.Writer, name, content string) error {
	h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: wheelTime}
	h.SetMode(0o644)
	f, err := zw.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(content))
	return err
}

// recordHash is a RECORD digest: "sha256=" and the urlsafe base64 of the digest, unpadded.
func recordHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}
