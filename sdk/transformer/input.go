package transformer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
)

// openFQN opens the node-local file fqn under the handler's root. Besides the
// paths that rootRelative rejects, os.Root refuses symlinks that lead out of
// the root, and absolute symlinks wherever they point.
func (h *Handler) openFQN(fqn string) (io.ReadCloser, error) {
	if h.root == nil {
		return nil, badRequest(errors.New("fqn is not enabled on this transformer"))
	}
	rel, err := rootRelative(h.root.Name(), fqn)
	if err != nil {
		return nil, badRequest(err)
	}
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer, beyond the reach of any context. Regular files ignore it.
	f, err := h.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, StatusError(http.StatusNotFound, fmt.Errorf("fqn %q: %w", fqn, fs.ErrNotExist))
	}
	if err != nil {
		return nil, badRequest(fmt.Errorf("fqn %q: %w", fqn, err))
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, badRequest(fmt.Errorf("fqn %q is not a regular file", fqn))
	}
	return f, nil
}

// rootRelative returns fqn relative to root, refusing paths that leave it.
// fqn is either absolute or relative to root.
func rootRelative(root, fqn string) (string, error) {
	rel := fqn
	if filepath.IsAbs(fqn) {
		var err error
		if rel, err = filepath.Rel(root, filepath.Clean(fqn)); err != nil {
			return "", fmt.Errorf("fqn %q is outside %s", fqn, root)
		}
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("fqn %q is outside %s", fqn, root)
	}
	return rel, nil
}

// fetch GETs an hpull object from src with the request's context, so that a
// client going away also stops the download.
func (h *Handler) fetch(ctx context.Context, src string) (io.ReadCloser, error) {
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, badRequest(fmt.Errorf("src %q is not an http(s) URL", src))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, badRequest(err)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, StatusError(http.StatusBadGateway, fmt.Errorf("fetch src: %w", err))
	}
	if resp.StatusCode == http.StatusOK {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return nil, StatusError(srcFailureStatus(resp.StatusCode), fmt.Errorf("fetch src: %s: %s", resp.Status, msg))
}

// srcFailureStatus passes a client error of the source on (a missing object
// stays 404) and reports anything else as a bad gateway.
func srcFailureStatus(code int) int {
	if code >= 400 && code < 500 {
		return code
	}
	return http.StatusBadGateway
}
