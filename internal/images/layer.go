package images

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// binaryLayer is a layer holding bin in dir ("" for the root), links to it there by the names of
// links, and an empty /tmp (Go's os.TempDir and most runtimes expect one; an empty base has none).
func binaryLayer(bin, dir string, links []string) (v1.Layer, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	type entry struct {
		hdr  tar.Header
		body []byte
	}
	entries := []entry{{tar.Header{Name: "tmp/", Typeflag: tar.TypeDir, Mode: 0o1777}, nil}}
	// Each parent directory gets its own entry, as a tar from a real filesystem has.
	for i, part := range strings.Split(dir, "/") {
		if part != "" {
			parent := strings.Join(strings.Split(dir, "/")[:i+1], "/")
			entries = append(entries, entry{tar.Header{Name: parent + "/", Typeflag: tar.TypeDir, Mode: 0o755}, nil})
		}
	}
	entries = append(entries, entry{tar.Header{Name: path.Join(dir, filepath.Base(bin)), Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(data))}, data})
	for _, l := range links {
		entries = append(entries, entry{tar.Header{Name: path.Join(dir, l), Typeflag: tar.TypeSymlink, Linkname: filepath.Base(bin), Mode: 0o777}, nil})
	}
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layer)), nil
	})
}
