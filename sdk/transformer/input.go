package transformer

import (
	"bytes"
	"encoding/xml"
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
// in-flight URLs or a URL on a store origin (checkSrc); the client follows no
// redirect, uses no proxy and sends no credential of the agent's (a store is a
// third party). The error goes to the agent and to the log: the secrets of a
// presigned src, which net/http's errors quote, are redacted from it.
func (h *Handler) fetch(r *http.Request, src string) (io.ReadCloser, error) {
	body, err := h.get(r, src)
	if err != nil {
		return nil, StatusError(statusOf(err), errors.New(wire.RedactPresigned(err.Error())))
	}
	return body, nil
}

func (h *Handler) get(r *http.Request, src string) (io.ReadCloser, error) {
	if err := checkSrc(r.RemoteAddr, src, h.stores); err != nil {
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
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxSrcErrorBytes))
	return nil, StatusError(srcFailureStatus(resp.StatusCode), fmt.Errorf("fetch src: %s: %s", resp.Status, srcErrorText(body)))
}

// maxSrcErrorBytes bounds what is read of a failed src's answer: enough for an S3 error, whose
// code and message come first.
const maxSrcErrorBytes = 4 << 10

// srcErrorText is what the client is told of a failed src's answer: the code and message of an S3
// error, or the start of any other answer (the node agent's are short text).
func srcErrorText(body []byte) string {
	if s := s3ErrorText(body); s != "" {
		return s
	}
	return string(body[:min(len(body), 512)])
}

// s3ErrorText returns "Code: Message" of an S3 error answer, "" when body is not one. Only those
// two are kept: S3 servers echo the request's signature and access key in other elements
// (SignatureProvided, AWSAccessKeyId, StringToSign, CanonicalRequest), which must not reach the
// agent. The body may be cut short: the elements are read as they come.
func s3ErrorText(body []byte) string {
	d := xml.NewDecoder(bytes.NewReader(body))
	var code, msg string
	var path []string // of the open elements
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			path = append(path, tok.Name.Local)
		case xml.EndElement:
			path = path[:len(path)-1]
		case xml.CharData:
			if len(path) == 2 && path[0] == "Error" && path[1] == "Code" {
				code = string(tok)
			}
			if len(path) == 2 && path[0] == "Error" && path[1] == "Message" {
				msg = string(tok)
			}
		}
	}
	if code == "" {
		return ""
	}
	return code + ": " + msg
}

// inflightIDLen is the length of an in-flight id: what crypto/rand.Text makes, 26 characters of
// base32's upper-case alphabet.
const inflightIDLen = 26

// checkSrc allows an hpull src only when it is an in-flight URL of the caller itself, or a URL on
// the origin of one of the namespace's stores (stores, nil for none). Anything else would let
// whoever can send the request make the transformer fetch any URL from inside the cluster. The
// refusal gives both reasons: the operator reading it may have meant either.
func checkSrc(remoteAddr, src string, stores *storesFile) error {
	caller, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		caller = remoteAddr
	}
	notInflight, notStore := "it does not parse", "it does not parse"
	if u, err := url.Parse(src); err == nil {
		if notInflight = whyNotInflight(caller, u); notInflight == "" {
			return nil
		}
		if notStore = stores.whyNot(u); notStore == "" {
			return nil
		}
	}
	return fmt.Errorf("src %q is neither an in-flight URL of the caller %s (%s) nor a URL of a store of the namespace (%s): "+
		"hpull transformers fetch only http://%s:<port>%s<id> and presigned URLs of the namespace's stores",
		src, caller, notInflight, notStore, caller, wire.PathInflight)
}

// whyNotInflight says why u is not an in-flight URL of the caller, http://<caller IP>:<port>/v1/inflight/<id>,
// or "" when it is: the node agent serves each object it hands a transformer there, once. The path
// is judged escaped, so that neither "/v1/inflight/../x" nor an encoded slash passes for an id.
func whyNotInflight(caller string, u *url.URL) string {
	switch {
	case u.Scheme != "http":
		return "scheme is not http"
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return "it has userinfo, a query or a fragment"
	}
	host, err := netip.ParseAddr(u.Hostname())
	if err != nil {
		return "its host " + u.Host + " is not an IP address"
	}
	from, err := netip.ParseAddr(caller)
	if err != nil || host.Unmap() != from.Unmap() {
		return "its host " + u.Hostname() + " is another address"
	}
	id, ok := strings.CutPrefix(u.EscapedPath(), wire.PathInflight)
	if !ok || !isInflightID(id) {
		return "its path is not " + wire.PathInflight + " and an id"
	}
	return ""
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
