package agent

import (
	"context"
	"net/http"
	"strconv"

	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/internal/status"
)

// The agent authenticates every caller's ServiceAccount token and asks RBAC
// about it (internal/access, docs/datapath-rbac.md):
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Authorizer says whether the caller of a request may do everything reqs
// name: access.Reviewer, which answers from bounded caches in front of
// TokenReview and SubjectAccessReview.
type Authorizer interface {
	Check(ctx context.Context, r *http.Request, reqs ...access.Request) (access.Caller, error)
	// Authenticate says whose token is, without asking RBAC anything: the
	// agent checks that a forwarded request comes from a peer agent.
	Authenticate(ctx context.Context, token string) (access.Caller, error)
	// Authorize asks RBAC again about a caller Check answered: an open
	// client stream is re-authorized without its token, which may have
	// expired since it was presented.
	Authorize(ctx context.Context, c access.Caller, q access.Request) error
}

// useTransforms asks to run every stage of p.
func useTransforms(p transformPath) []access.Request {
	reqs := make([]access.Request, 0, len(p.pipeline)+2)
	for _, name := range p.pipeline {
		reqs = append(reqs, access.Request{Verb: access.VerbUse, Namespace: p.namespace, Resource: access.ResourceTransform, Name: name})
	}
	return reqs
}

// Verbs on a namespace's data (the virtual resource objects).
const (
	readData  = "get"
	writeData = "create"
)

func dataAccess(verb, ns string) access.Request {
	return access.Request{Verb: verb, Namespace: ns, Resource: access.ResourceObjects}
}

// authorized checks r's caller against reqs and answers 401, 403 or 503
// when it may not go on.
func (a *Agent) authorized(w http.ResponseWriter, r *http.Request, p transformPath, reqs ...access.Request) bool {
	_, ok := a.authorizedCaller(w, r, p, reqs...)
	return ok
}

// authorizedCaller is authorized, returning who the caller is.
func (a *Agent) authorizedCaller(w http.ResponseWriter, r *http.Request, p transformPath, reqs ...access.Request) (access.Caller, bool) {
	c, err := a.opts.Access.Check(r.Context(), r, reqs...)
	if err == nil {
		return c, true
	}
	a.fail(w, p, accessError(w, err))
	return access.Caller{}, false
}

// accessError is the answer to a refusal of the Authorizer: 401 (asking for
// a bearer token), 403, 429 (saying when to retry) or 503.
//
// The reviewer's own rate limit is 429 rather than 503: like the node's other
// caps it is the agent refusing more work, not the API server failing, and
// the manager waits on a 429 where it counts a 503 as the agent unreachable.
func accessError(w http.ResponseWriter, err error) error {
	code := access.Status(err)
	switch code {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="mlkube-datapath"`)
	case http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(access.RetryAfter(err)))
	}
	return status.With(code, err)
}

// serveNonResource answers a read-only endpoint that RBAC grants as a
// non-resource URL (the agent's counters and metrics).
func (a *Agent) serveNonResource(w http.ResponseWriter, r *http.Request, h http.Handler) {
	if a.authorized(w, r, transformPath{}, access.Request{Verb: "get", Path: r.URL.Path}) {
		h.ServeHTTP(w, r)
	}
}
