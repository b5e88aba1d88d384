package ioshim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Install copies the running executable to dst with mode 0755. It writes a
// temporary file next to dst and renames it, so that dst is either absent or
// complete, even when the init container is restarted halfway.
func Install(dst string) error {
	self, err := os.Executable()
	if err != nil {
		// os.Executable reads /proc, which a container has but a bare chroot
		// may not; the init container's command names the shim by its
		// absolute path anyway.
		if !filepath.IsAbs(os.Args[0]) {
			return fmt.Errorf("install: %w", err)
		}
		self = os.Args[0]
	}
	return installFile(self, dst)
}

func installFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*")
	if err != nil {
		return fmt.Errorf("install: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("install %s: %w", dst, err)
		}
	}()
	if _, err := io.Copy(tmp, in); err != nil {
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
