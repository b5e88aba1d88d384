package transformer

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"github.com/mlkube/mlkube/api/wire"
)

// errUnauthorized answers a request without the node agent's credential. Only the agent holds
// it, so no other client can use the transformer: not another namespace's pod, not a pod on the
// node's network, which NetworkPolicies do not reliably keep out.
var errUnauthorized = StatusError(http.StatusUnauthorized, errors.New(
	"request without the node agent's credential ("+wire.HeaderTransformerToken+"); transformers answer only their node's agent"))

// errNoTokenSource is New without a way to know the agent's credential: serving anyone who
// reaches the port must be asked for, not fallen into.
var errNoTokenSource = errors.New("no agent credential: " + wire.EnvTokenFile +
	" is unset (the controller sets it; use WithoutAuth to run without one locally)")

// credential is the token a request must carry; nil checks nothing (WithoutAuth).
type credential interface {
	// token returns the token, or why there is none: then every request is refused.
	token() (string, error)
}

type fixedToken string

func (t fixedToken) token() (string, error) {
	if t == "" {
		return "", errors.New("the token given to WithToken is empty")
	}
	return string(t), nil
}

// maxTokenBytes bounds the token file: far above any token, low enough that a wrong file mounted
// there does not fill the memory.
const maxTokenBytes = 64 << 10

// tokenFile is the token the controller mounts from the Transform's Secret. It is read again
// whenever it changes, so that a Secret replaced under a running pod is honoured without a
// restart.
type tokenFile struct{ file *watchedFile[string] }

func newTokenFile(path string) tokenFile {
	return tokenFile{&watchedFile[string]{path: path, limit: maxTokenBytes, parse: parseToken}}
}

func parseToken(b []byte) (string, error) {
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return "", errors.New("the token is empty")
	}
	return tok, nil
}

func (f tokenFile) token() (string, error) {
	tok, err := f.file.get()
	if err != nil {
		return "", fmt.Errorf("agent credential: %w", err)
	}
	return tok, nil
}

// newCredential picks the credential the options ask for.
func newCredential(o options) (credential, error) {
	switch {
	case o.withoutAuth:
		return nil, nil
	case o.tokenSet:
		return fixedToken(o.token), nil
	case o.tokenFile != "":
		return newTokenFile(o.tokenFile), nil
	}
	return nil, errNoTokenSource
}

// authorize reports whether r carries the agent's credential. The comparison takes the same
// time whatever the bytes, so only the token's length could leak, and that is public. A token
// that cannot be read refuses every request, and the reason goes to the log: the pod still
// turns ready (GET /health needs no credential), so the refusals explain themselves.
func (h *Handler) authorize(r *http.Request) bool {
	if h.cred == nil {
		return true
	}
	want, err := h.cred.token()
	if err != nil {
		// Once per distinct reason, not once per request.
		msg := err.Error()
		if old := h.credWarned.Swap(&msg); old == nil || *old != msg {
			h.log.Warn("refusing every request until the credential can be read", "error", err)
		}
		return false
	}
	got := r.Header.Get(wire.HeaderTransformerToken)
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// refuse answers a request without the credential. Its body is read no further than a failed
// object's: a caller without the credential cannot make the transformer read a whole object.
func refuse(w http.ResponseWriter, r *http.Request) {
	if !drained(r.Body, errorDrainLimit) {
		w.Header().Set("Connection", "close")
	}
	writeError(w, errUnauthorized)
}

// isHealth reports whether r is the health check, the only request answered without the
// credential: the kubelet's readiness probe has none. route decides it the same way, so an
// object named "health" (a GET with ?src= or ?fqn=, or a PUT) is not exempt.
func isHealth(r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.EscapedPath() != wire.PathHealth {
		return false
	}
	q := wire.ParseQuery(r.URL.Query())
	return q.FQN == "" && q.Src == ""
}
