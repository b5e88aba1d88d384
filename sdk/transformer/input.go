package transformer

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mlkube/mlkube/api/wire"
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
// client going away also stops the download. src must be one of the caller's
// in-flight URLs (checkSrc); the client follows no redirect and uses no proxy.
func (h *Handler) fetch(r *http.Request, src string) (io.ReadCloser, error) {
	if err := checkSrc(r.RemoteAddr, src); err != nil {
		return nil, badRequest(err)
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, src, nil)
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

// inflightIDLen is the length of an in-flight id: what crypto/rand.Text makes, 26 characters of
// base32's upper-case alphabet.
const inflightIDLen = 26

// checkSrc allows an hpull src only when it is an in-flight URL of the caller itself,
// http://<caller IP>:<port>/v1/inflight/<id>: the node agent serves each object it hands a
// transformer there, once. Anything else would let whoever can send the request make the
// transformer fetch any URL from inside the cluster. The path is judged after parsing, escaped,
// so that neither "/v1/inflight/../x" nor an encoded slash passes for an id.
func checkSrc(remoteAddr, src string) error {
	caller, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		caller = remoteAddr
	}
	refuse := func(why string) error {
		return fmt.Errorf("src %q is not an in-flight URL of the caller %s (%s): hpull transformers fetch only http://%s:<port>%s<id>",
			src, caller, why, caller, wire.PathInflight)
	}
	u, err := url.Parse(src)
	switch {
	case err != nil:
		return refuse("it does not parse")
	case u.Scheme != "http":
		return refuse("scheme is not http")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return refuse("it has userinfo, a query or a fragment")
	}
	host, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return refuse("its host " + u.Host + " is not an IP address")
	}
	from, err := netip.ParseAddr(caller)
	if err != nil || host.Unmap() != from.Unmap() {
		return refuse("its host " + u.Hostname() + " is another address")
	}
	id, ok := strings.CutPrefix(u.EscapedPath(), wire.PathInflight)
	if !ok || !isInflightID(id) {
		return refuse("its path is not " + wire.PathInflight + " and an id")
	}
	return nil
}

func isInflightID(id string) bool {
	if len(id) != inflightIDLen {
		return false
	}
	for _, c := range []byte(id) {
		if (c < 'A' || c > 'Z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// srcFailureStatus passes a client error of the source on (a missing object
// stays 404) and reports anything else as a bad gateway.
func srcFailureStatus(code int) int {
	if code >= 400 && code < 500 {
		return code
	}
	return http.StatusBadGateway
}
