package images

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Unpack writes the filesystem of the image ref, read from the tarball at path, under dir, and
// returns the image's configuration. Tests run an image's entrypoint chrooted there, which shows
// that the image holds all its program needs without a container engine. Ownership is not
// restored; os.Root keeps every write inside dir, whatever the image's symlinks point at.
func Unpack(tarPath, ref, dir string) (*v1.ConfigFile, error) {
	img, cf, err := readImage(tarPath, ref)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if err := eachFile(img, func(h *tar.Header, body io.Reader) error { return unpackEntry(root, h, body) }); err != nil {
		return nil, err
	}
	return cf, nil
}

// readImage reads the image ref and its configuration from the tarball at tarPath.
func readImage(tarPath, ref string) (v1.Image, *v1.ConfigFile, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return nil, nil, err
	}
	img, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		return nil, nil, fmt.Errorf("%s does not hold %s: %w", tarPath, ref, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, nil, err
	}
	return img, cf, nil
}

// eachFile calls fn with every entry of img's filesystem, its layers flattened, until fn fails.
func eachFile(img v1.Image, fn func(h *tar.Header, body io.Reader) error) error {
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(h, tr); err != nil {
			return err
		}
	}
}

// unpackEntry writes one entry of a flattened image filesystem. An existing file of the same name
// is replaced, not written through: it may be a symlink.
func unpackEntry(root *os.Root, h *tar.Header, body io.Reader) error {
	name := path.Clean(h.Name)
	if name == "." {
		return nil
	}
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(h.Mode).Perm()
	if h.Mode&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := root.MkdirAll(name, 0o755); err != nil {
			return err
		}
		return root.Chmod(name, mode)
	case tar.TypeReg:
		if err := removeExisting(root, name); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		_, err = io.Copy(f, body)
		return errors.Join(err, f.Chmod(mode), f.Close())
	case tar.TypeSymlink:
		if err := removeExisting(root, name); err != nil {
			return err
		}
		return root.Symlink(h.Linkname, name)
	case tar.TypeLink:
		if err := removeExisting(root, name); err != nil {
			return err
		}
		return root.Link(path.Clean(h.Linkname), name)
	}
	return nil
}

// removeExisting removes what an earlier layer put at name, so that this layer's entry replaces it;
// nothing there is the usual case.
func removeExisting(root *os.Root, name string) error {
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
