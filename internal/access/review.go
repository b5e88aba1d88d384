package access

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

const (
	// Group is the API group of the data path's virtual resources.
	Group = "etl.mlkube.io"
	// Verbs and resources of the RBAC model (see the package comment).
	VerbUse           = "use"
	ResourceTransform = "transforms"
	ResourceObjects   = "objects"
	// ResourceObjectStores is the ObjectStore kind itself: who may get one may list its objects
	// through an agent.
	ResourceObjectStores = "objectstores"
	// maxTokenLen bounds a bearer token: ServiceAccount tokens are about 1 KiB, and a larger one
	// would only make the agent hash and send more.
	maxTokenLen = 16 << 10
)

var (
	// ErrUnauthenticated: the caller presented no valid token (HTTP 401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: RBAC does not allow the caller the request (HTTP 403).
	ErrForbidden = errors.New("forbidden")
	// ErrThrottled: the request needed a review the reviewer's rate did not allow, and was not
	// reviewed (HTTP 429, RetryAfter).
	ErrThrottled = errors.New("too many reviews")
)

// Caller is who a token belongs to, as the TokenReview answered.
type Caller struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Request is one thing a caller asks for: a verb on a resource of a namespace, or a verb on a
// non-resource path (when Resource is empty).
type Request struct {
	Verb      string
	Namespace string
	Resource  string
	Name      string
	Path      string
	// Core says Resource is one of Kubernetes' core group (secrets), not of the data path's
	// Group: what the webhooks ask of a user whose object makes the agents read a Secret.
	Core bool
}

func (q Request) String() string {
	if q.Resource == "" {
		return fmt.Sprintf("%s %s", q.Verb, q.Path)
	}
	s := fmt.Sprintf("%s %s.%s", q.Verb, q.Resource, Group)
	if q.Core {
		s = fmt.Sprintf("%s %s", q.Verb, q.Resource)
	}
	if q.Name != "" {
		s += " " + q.Name
	}
	return s + " in namespace " + q.Namespace
}

// Options bound the reviewer's caches and how long answers live in them.
type Options struct {
	// Audience is what callers' tokens must be issued for (projected ServiceAccount tokens with
	// this audience, or `kubectl create token --audience`).
	Audience string
	// MaxEntries bounds each cache.
	MaxEntries int
	// AllowTTL and DenyTTL: how long a positive and a negative answer are reused. A new
	// RoleBinding takes effect after at most DenyTTL.
	AllowTTL, DenyTTL time.Duration
	// QPS and Burst bound the reviews sent to the API server, TokenReviews and
	// SubjectAccessReviews together: a token bucket of Burst refilled at QPS a second. Cached
	// answers cost none; a request that needs a review past the bucket fails with ErrThrottled
	// without one. Both must be positive.
	QPS   float64
	Burst int
	Now   func() time.Time
}

// DefaultOptions: answers reused for a minute (refusals for 10 s), 4096 entries per cache, 50
// reviews a second in bursts of 100.
func DefaultOptions(audience string) Options {
	return Options{Audience: audience, MaxEntries: 4096, AllowTTL: time.Minute, DenyTTL: 10 * time.Second,
		QPS: 50, Burst: 100, Now: time.Now}
}

// Reviewer authenticates and authorizes data path callers against the API server.
type Reviewer struct {
	opts      Options
	tokens    authnclient.TokenReviewInterface
	access    authzclient.SubjectAccessReviewInterface
	callers   *ttlCache[tokenAnswer]
	decisions *ttlCache[string]
	// reviews is the token bucket of Options.QPS and Burst: every distinct bogus token or name a
	// caller sends would otherwise cost the API server a review.
	reviews *rate.Limiter
}

type tokenAnswer struct {
	caller Caller
	reason string // why the token was refused; empty when it was accepted
}

// NewReviewer returns a Reviewer calling the API server through tokens and access.
func NewReviewer(tokens authnclient.TokenReviewInterface, access authzclient.SubjectAccessReviewInterface, opts Options) *Reviewer {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Reviewer{
		opts: opts, tokens: tokens, access: access,
		callers:   newTTLCache[tokenAnswer](opts.MaxEntries, opts.Now),
		decisions: newTTLCache[string](opts.MaxEntries, opts.Now),
		reviews:   rate.NewLimiter(rate.Limit(opts.QPS), opts.Burst),
	}
}

// BearerToken is the token of an "Authorization: Bearer" header, or "".
func BearerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// Check authenticates the request's bearer token and authorizes every one of reqs.
func (r *Reviewer) Check(ctx context.Context, hr *http.Request, reqs ...Request) (Caller, error) {
	c, err := r.Authenticate(ctx, BearerToken(hr))
	if err != nil {
		return Caller{}, err
	}
	for _, q := range reqs {
		if err := r.Authorize(ctx, c, q); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Authenticate returns who token belongs to, by TokenReview for the reviewer's audience.
func (r *Reviewer) Authenticate(ctx context.Context, token string) (Caller, error) {
	if err := r.checkToken(token); err != nil {
		return Caller{}, err
	}
	a, err := r.callers.lookup(digest(token), func() (tokenAnswer, time.Duration, error) {
		ctx, cancel, err := r.begin(ctx)
		if err != nil {
			return tokenAnswer{}, 0, err
		}
		defer cancel()
		return r.review(ctx, token)
	})
	if err != nil {
		return Caller{}, err
	}
	if a.reason != "" {
		return Caller{}, fmt.Errorf("%w: %s", ErrUnauthenticated, a.reason)
	}
	return a.caller, nil
}

// checkToken refuses a token that cannot be a ServiceAccount token before it costs a cache entry
// or a TokenReview: none, one over maxTokenLen, or one not shaped as a JWT.
func (r *Reviewer) checkToken(token string) error {
	switch {
	case token == "":
		return fmt.Errorf("%w: no bearer token; send a ServiceAccount token with audience %q in the Authorization header (a projected token volume, or `kubectl create token SA --audience %s`)",
			ErrUnauthenticated, r.opts.Audience, r.opts.Audience)
	case len(token) > maxTokenLen:
		return fmt.Errorf("%w: the bearer token is longer than %d bytes", ErrUnauthenticated, maxTokenLen)
	case !jwtShaped(token):
		return fmt.Errorf("%w: the bearer token is not a JWT (three base64url segments joined by dots); send a ServiceAccount token with audience %q",
			ErrUnauthenticated, r.opts.Audience)
	}
	return nil
}

// jwtShaped reports whether token has the shape of a JWT in compact serialization, as every
// ServiceAccount token has: three non-empty base64url segments joined by dots.
func jwtShaped(token string) bool {
	n := 0
	for seg := range strings.SplitSeq(token, ".") {
		if n++; n > 3 || seg == "" || strings.ContainsFunc(seg, notBase64URL) {
			return false
		}
	}
	return n == 3
}

func notBase64URL(c rune) bool {
	return (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_'
}

func (r *Reviewer) review(ctx context.Context, token string) (tokenAnswer, time.Duration, error) {
	tr, err := r.tokens.Create(ctx, &authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{
		Token: token, Audiences: []string{r.opts.Audience},
	}}, metav1.CreateOptions{})
	if err != nil {
		return tokenAnswer{}, 0, fmt.Errorf("reviewing the caller's token: %w", err)
	}
	st := tr.Status
	if !st.Authenticated {
		reason := "the token is not valid"
		if st.Error != "" {
			reason += ": " + st.Error
		}
		return tokenAnswer{reason: reason + fmt.Sprintf(" (it must be a live ServiceAccount token for audience %q)", r.opts.Audience)}, r.opts.DenyTTL, nil
	}
	// The review asked for the agent's audience; only an answer that confirms it is trusted. An
	// empty list is no confirmation: an authenticator that ignored the audience would let in a
	// token issued for anything else, the API server's own included.
	if !slices.Contains(st.Audiences, r.opts.Audience) {
		return tokenAnswer{reason: wrongAudience(st.Audiences, r.opts.Audience)}, r.opts.DenyTTL, nil
	}
	return tokenAnswer{caller: CallerOf(st.User)}, r.opts.AllowTTL, nil
}

// CallerOf is the caller a user of the API server is: whom a TokenReview authenticated, or who
// sent an admission request.
func CallerOf(u authnv1.UserInfo) Caller {
	extra := make(map[string][]string, len(u.Extra))
	for k, v := range u.Extra {
		extra[k] = v
	}
	return Caller{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}

// wrongAudience says why a TokenReview answer naming the audiences got does not admit a token
// for want.
func wrongAudience(got []string, want string) string {
	if len(got) == 0 {
		return fmt.Sprintf("the API server did not confirm that the token is for %q (its TokenReview answer names no audience)", want)
	}
	return fmt.Sprintf("the token is for %v, not for %q", got, want)
}

// Authorize asks RBAC, by SubjectAccessReview, whether c may do q.
func (r *Reviewer) Authorize(ctx context.Context, c Caller, q Request) error {
	denied, err := r.decisions.lookup(decisionKey(c, q), func() (string, time.Duration, error) {
		ctx, cancel, err := r.begin(ctx)
		if err != nil {
			return "", 0, err
		}
		defer cancel()
		return r.ask(ctx, c, q)
	})
	if err != nil {
		return err
	}
	if denied != "" {
		return fmt.Errorf("%w: %s may not %s%s", ErrForbidden, c.Name, q, denied)
	}
	return nil
}

// decisionKey is the key of the answer for c and q: who asks, as the SubjectAccessReview names
// them, and what.
func decisionKey(c Caller, q Request) key {
	fields := make([]string, 0, len(c.Groups)+8)
	fields = append(fields, c.Name, c.UID, strconv.Itoa(len(c.Groups)))
	fields = append(fields, c.Groups...)
	return digest(append(fields, q.Verb, q.Namespace, q.Resource, q.Name, q.Path)...)
}

// ReviewSpec is the SubjectAccessReview that asks whether c may do q: what the agent sends for a
// data path caller, and what the TransformRun webhook sends for a run's creator, so that both
// ask RBAC exactly the same question.
func ReviewSpec(c Caller, q Request) authzv1.SubjectAccessReviewSpec {
	spec := authzv1.SubjectAccessReviewSpec{User: c.Name, UID: c.UID, Groups: c.Groups}
	for k, v := range c.Extra {
		if spec.Extra == nil {
			spec.Extra = map[string]authzv1.ExtraValue{}
		}
		spec.Extra[k] = v
	}
	if q.Resource == "" {
		spec.NonResourceAttributes = &authzv1.NonResourceAttributes{Verb: q.Verb, Path: q.Path}
	} else {
		spec.ResourceAttributes = &authzv1.ResourceAttributes{
			Namespace: q.Namespace, Verb: q.Verb, Group: Group, Resource: q.Resource, Name: q.Name,
		}
		if q.Core {
			spec.ResourceAttributes.Group = ""
		}
	}
	return spec
}

// Allowed says whether a SubjectAccessReview's answer allows: an authorizer may both allow and
// deny (a webhook authorizer's explicit denial wins).
func Allowed(st authzv1.SubjectAccessReviewStatus) bool { return st.Allowed && !st.Denied }

// ask returns "" when q is allowed, else the reason RBAC gave (possibly " " for none).
func (r *Reviewer) ask(ctx context.Context, c Caller, q Request) (string, time.Duration, error) {
	sar, err := r.access.Create(ctx, &authzv1.SubjectAccessReview{Spec: ReviewSpec(c, q)}, metav1.CreateOptions{})
	if err != nil {
		return "", 0, fmt.Errorf("asking RBAC whether %s may %s: %w", c.Name, q, err)
	}
	if Allowed(sar.Status) {
		return "", r.opts.AllowTTL, nil
	}
	why := "; bind a Role or ClusterRole that grants it (see docs/datapath-rbac.md)"
	if sar.Status.Reason != "" {
		why = " (" + sar.Status.Reason + ")" + why
	}
	return why, r.opts.DenyTTL, nil
}

// begin takes one review from the bucket, or fails with ErrThrottled when it is empty: the API
// server is not asked, and the caller is told when to retry. The review's context is detached: a
// review shared by concurrent callers (see ttlCache.lookup) must not fail because the first of
// them went away, yet must not hang on an API server that does not answer.
func (r *Reviewer) begin(ctx context.Context) (context.Context, context.CancelFunc, error) {
	if !r.reviews.AllowN(r.opts.Now(), 1) {
		return nil, nil, &throttledError{qps: r.opts.QPS, burst: r.opts.Burst}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reviewTimeout)
	return ctx, cancel, nil
}

// throttledError is ErrThrottled with the rate that refused the review.
type throttledError struct {
	qps   float64
	burst int
}

func (e *throttledError) Error() string {
	return fmt.Sprintf("%v: this agent sends the API server at most %g TokenReviews and SubjectAccessReviews a second, in bursts of %d (node-agent --review-qps, --review-burst), for callers and requests it has not reviewed lately; retry in %d s",
		ErrThrottled, e.qps, e.burst, e.retryAfter())
}

func (e *throttledError) Is(target error) bool { return target == ErrThrottled }

// retryAfter is how long the bucket takes to earn one review back, in whole seconds, at least one.
func (e *throttledError) retryAfter() int {
	return max(1, int(math.Ceil(1/e.qps)))
}

// RetryAfter is the Retry-After, in seconds, that answers a throttled Check; 0 for any other
// error.
func RetryAfter(err error) int {
	if e, ok := errors.AsType[*throttledError](err); ok {
		return e.retryAfter()
	}
	return 0
}

// reviewTimeout bounds one TokenReview or SubjectAccessReview.
const reviewTimeout = 10 * time.Second

// Status is the HTTP status for an error of Check: 401, 403, 429 when the reviewer is over its
// rate, or 503 when the API server could not be asked (the caller may retry either).
func Status(err error) int {
	switch {
	case errors.Is(err, ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, ErrThrottled):
		return http.StatusTooManyRequests
	default:
		return http.StatusServiceUnavailable
	}
}
