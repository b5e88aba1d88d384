package access

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

const audience = "mlkube-datapath"

// apiServer stands in for the API server's TokenReview and SubjectAccessReview endpoints in unit
// tests: tokens maps a token to its user, allowed says which "user verb resource ns" RBAC allows.
type apiServer struct {
	mu      sync.Mutex
	tokens  map[string]string
	allowed map[string]bool
	failing bool
	// noAudiences: TokenReview answers confirm no audience (status.audiences empty).
	noAudiences    bool
	reviews, asked atomic.Int32
	gate           chan struct{} // when set, reviews wait on it
}

func newReviewer(t *testing.T, s *apiServer, clock *time.Time, configure ...func(*Options)) *Reviewer {
	t.Helper()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s.reviews.Add(1)
		if s.gate != nil {
			<-s.gate
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failing {
			return true, nil, errors.New("connection refused")
		}
		if user, ok := s.tokens[tr.Spec.Token]; ok {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, Audiences: tr.Spec.Audiences,
				User: authnv1.UserInfo{Username: user, UID: "uid-" + user, Groups: []string{"system:serviceaccounts"}}}
			if s.noAudiences {
				tr.Status.Audiences = nil
			}
		} else {
			tr.Status = authnv1.TokenReviewStatus{Error: "invalid bearer token"}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		s.asked.Add(1)
		sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.failing {
			return true, nil, errors.New("connection refused")
		}
		var key string
		if ra := sar.Spec.ResourceAttributes; ra != nil {
			key = fmt.Sprintf("%s %s %s/%s %s", sar.Spec.User, ra.Verb, ra.Group, ra.Resource, ra.Namespace)
		} else {
			key = fmt.Sprintf("%s %s %s", sar.Spec.User, sar.Spec.NonResourceAttributes.Verb, sar.Spec.NonResourceAttributes.Path)
		}
		sar.Status.Allowed = s.allowed[key]
		return true, sar, nil
	})
	opts := DefaultOptions(audience)
	opts.Now = func() time.Time { return *clock }
	for _, c := range configure {
		c(&opts)
	}
	return NewReviewer(cs.AuthenticationV1().TokenReviews(), cs.AuthorizationV1().SubjectAccessReviews(), opts)
}

// jwt is a token of a JWT's shape (header.payload.signature, base64url) that stands for name.
func jwt(name string) string {
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(name)) + ".c2ln"
}

func withToken(token string) *http.Request {
	r, _ := http.NewRequest("GET", "http://agent/v1/transform/a/md5/x", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return r
}

var useMD5 = Request{Verb: VerbUse, Namespace: "a", Resource: ResourceTransform, Name: "md5"}

func TestCheckAuthenticatesAndAuthorizes(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok-a"): "sa-a", jwt("tok-b"): "sa-b"},
		allowed: map[string]bool{"sa-a use etl.mlkube.io/transforms a": true}}
	r := newReviewer(t, s, &clock)
	for name, tc := range map[string]struct {
		token      string
		wantStatus int
		wantIn     string
	}{
		"no token":               {"", 401, `audience "mlkube-datapath"`},
		"unknown token":          {jwt("forged"), 401, "invalid bearer token"},
		"allowed":                {jwt("tok-a"), 0, ""},
		"authenticated, no RBAC": {jwt("tok-b"), 403, "sa-b may not use transforms.etl.mlkube.io md5 in namespace a"},
		"too long":               {strings.Repeat("x", maxTokenLen+1), 401, "longer than"},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := r.Check(context.Background(), withToken(tc.token), useMD5)
			if tc.wantStatus == 0 {
				if err != nil || c.Name != "sa-a" {
					t.Fatalf("Check = %+v, %v; want sa-a allowed", c, err)
				}
				return
			}
			if err == nil || Status(err) != tc.wantStatus || !strings.Contains(err.Error(), tc.wantIn) {
				t.Errorf("Check = %v (status %d); want %d containing %q", err, Status(err), tc.wantStatus, tc.wantIn)
			}
		})
	}
}

// TestAnswersAreCachedThenExpire: the hot path pays no API call; a new RoleBinding takes effect
// once the refusal expires.
func TestAnswersAreCachedThenExpire(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}, allowed: map[string]bool{}}
	r := newReviewer(t, s, &clock)
	ctx := context.Background()
	for range 100 {
		if _, err := r.Check(ctx, withToken(jwt("tok")), useMD5); Status(err) != 403 {
			t.Fatalf("Check = %v, want 403", err)
		}
	}
	if s.reviews.Load() != 1 || s.asked.Load() != 1 {
		t.Fatalf("%d token reviews and %d access reviews for 100 requests; want 1 each", s.reviews.Load(), s.asked.Load())
	}
	s.mu.Lock()
	s.allowed["sa use etl.mlkube.io/transforms a"] = true // a RoleBinding is created
	s.mu.Unlock()
	clock = clock.Add(r.opts.DenyTTL - time.Millisecond)
	if _, err := r.Check(ctx, withToken(jwt("tok")), useMD5); Status(err) != 403 {
		t.Fatalf("before the refusal expires: %v, want the cached 403", err)
	}
	clock = clock.Add(time.Millisecond)
	if _, err := r.Check(ctx, withToken(jwt("tok")), useMD5); err != nil {
		t.Fatalf("after the refusal expired: %v, want allowed", err)
	}
	if got := s.asked.Load(); got != 2 {
		t.Errorf("%d access reviews, want 2", got)
	}
}

// TestAnswerMustConfirmTheAudience: an answer that authenticates the token but does not say it is
// for the agent's audience is not trusted: the agent asked for mlkube-datapath, and an API server
// (or authenticator) that ignores the audience would let any of the user's tokens in.
func TestAnswerMustConfirmTheAudience(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}, allowed: map[string]bool{"sa use etl.mlkube.io/transforms a": true}, noAudiences: true}
	r := newReviewer(t, s, &clock)
	_, err := r.Check(context.Background(), withToken(jwt("tok")), useMD5)
	if Status(err) != 401 || !strings.Contains(err.Error(), `"mlkube-datapath"`) {
		t.Fatalf("Check with an answer of no audience = %v (status %d); want 401 naming the audience", err, Status(err))
	}
}

// TestMalformedTokensCostNoReview: what does not have a JWT's shape (three base64url segments,
// as every ServiceAccount token has) is refused with 401 without a TokenReview and without a
// cache entry, so a flood of garbage costs the API server nothing.
func TestMalformedTokensCostNoReview(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{}}
	r := newReviewer(t, s, &clock)
	var refusals int
	var last error
	for i := range 200 {
		for _, token := range []string{
			fmt.Sprintf("forged-%d", i), // one segment
			fmt.Sprintf("a.b%d", i),     // two
			fmt.Sprintf("a.b.c.%d", i),  // four
			fmt.Sprintf("a..%d", i),     // an empty one
			fmt.Sprintf("a.b+/=.%d", i), // base64, not base64url
		} {
			_, last = r.Authenticate(context.Background(), token)
			if Status(last) == 401 && strings.Contains(last.Error(), "JWT") {
				refusals++
			}
		}
	}
	if n := s.reviews.Load(); n != 0 || refusals != 1000 || r.callers.len() != 0 {
		t.Errorf("1000 malformed tokens: %d TokenReviews, %d cached answers, %d refusals saying why (the last: %v); want none, none, 1000",
			n, r.callers.len(), refusals, last)
	}
}

// TestReviewsAreRateLimited: 1000 distinct bogus tokens of a JWT's shape, each of which would be a
// TokenReview, cost at most the limiter's burst of reviews; past it they are answered 429 naming
// the limit, with no call, while a caller whose token is cached keeps working. A request not
// cached (a SubjectAccessReview) takes from the same bucket, and once it refills reviews go on.
func TestReviewsAreRateLimited(t *testing.T) {
	clock := time.Unix(1000, 0) // frozen: the bucket refills only when the test moves the clock
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}, allowed: map[string]bool{"sa use etl.mlkube.io/transforms a": true}}
	r := newReviewer(t, s, &clock)
	ctx := context.Background()
	if _, err := r.Check(ctx, withToken(jwt("tok")), useMD5); err != nil {
		t.Fatalf("the caller before the flood: %v", err)
	}
	var throttled error
	for i := range 1000 {
		if _, err := r.Authenticate(ctx, jwt(fmt.Sprintf("forged-%d", i))); Status(err) == 429 {
			throttled = err
		}
		if _, err := r.Check(ctx, withToken(jwt("tok")), useMD5); err != nil {
			t.Fatalf("the cached caller during the flood, after %d bogus tokens: %v", i+1, err)
		}
	}
	if n := s.reviews.Load() + s.asked.Load(); n > int32(r.opts.Burst) {
		t.Errorf("%d reviews for 1000 bogus tokens and a cached caller; want at most the burst, %d", n, r.opts.Burst)
	}
	if throttled == nil || !strings.Contains(throttled.Error(), "--review-qps") || RetryAfter(throttled) != 1 {
		t.Fatalf("past the burst: %v (retry after %d s); want 429 naming the limit, retry after 1 s", throttled, RetryAfter(throttled))
	}
	other := Request{Verb: VerbUse, Namespace: "b", Resource: ResourceTransform, Name: "md5"}
	asked := s.asked.Load()
	if _, err := r.Check(ctx, withToken(jwt("tok")), other); Status(err) != 429 || s.asked.Load() != asked {
		t.Errorf("a request not cached, the bucket empty: %v (status %d), %d SubjectAccessReviews; want 429 and none", err, Status(err), s.asked.Load()-asked)
	}
	clock = clock.Add(time.Second)
	if _, err := r.Check(ctx, withToken(jwt("tok")), other); Status(err) != 403 {
		t.Errorf("a request not cached, a second later: %v (status %d); want RBAC's 403", err, Status(err))
	}
}

func TestAPIErrorsAreNotCached(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}, allowed: map[string]bool{"sa get /v1/stats": true}, failing: true}
	r := newReviewer(t, s, &clock)
	stats := Request{Verb: "get", Path: "/v1/stats"}
	_, err := r.Check(context.Background(), withToken(jwt("tok")), stats)
	if Status(err) != 503 || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Check with the API server down = %v (status %d); want 503", err, Status(err))
	}
	s.mu.Lock()
	s.failing = false
	s.mu.Unlock()
	if _, err := r.Check(context.Background(), withToken(jwt("tok")), stats); err != nil {
		t.Fatalf("Check once the API server is back = %v", err)
	}
}

func TestCachesAreBounded(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{}}
	r := newReviewer(t, s, &clock)
	r.callers.max = 64
	for i := range 1000 {
		_, _ = r.Authenticate(context.Background(), jwt(fmt.Sprintf("forged-%d", i)))
	}
	if n := r.callers.len(); n > 64 {
		t.Errorf("%d cached answers after 1000 distinct tokens; want at most 64", n)
	}
}

// TestLongNamesCostBoundedMemory: 1024 requests naming Transforms of 60 KiB, each reviewed (the
// bucket opened wide) and refused, leave the cache with at most MaxEntries keys of a SHA-256
// each, not the names: a refusal costs the same few bytes whatever a caller sends.
func TestLongNamesCostBoundedMemory(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}}
	r := newReviewer(t, s, &clock, func(o *Options) { o.Burst = 2000 })
	c, err := r.Authenticate(context.Background(), jwt("tok"))
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 60<<10)
	for i := range 1024 {
		q := Request{Verb: VerbUse, Namespace: "a", Resource: ResourceTransform, Name: fmt.Sprint(i, long)}
		if err := r.Authorize(context.Background(), c, q); Status(err) != 403 {
			t.Fatalf("request %d: %v, want 403", i, err)
		}
	}
	bound := r.opts.MaxEntries * sha256.Size
	if n := keyBytes(r.decisions); n > bound || s.asked.Load() != 1024 {
		t.Errorf("after 1024 refusals of 60 KiB names (%d reviews): %d bytes of keys cached; want at most %d", s.asked.Load(), n, bound)
	}
}

// TestDecisionKeysAreUnambiguous: answers for different callers or requests never share a key,
// however their fields split what they hold.
func TestDecisionKeysAreUnambiguous(t *testing.T) {
	q := Request{Verb: "get", Namespace: "a", Resource: ResourceObjects}
	for name, pair := range map[string][2]key{
		"groups":       {decisionKey(Caller{Name: "u", Groups: []string{"a,b"}}, q), decisionKey(Caller{Name: "u", Groups: []string{"a", "b"}}, q)},
		"name and uid": {decisionKey(Caller{Name: "u\x00v"}, q), decisionKey(Caller{Name: "u", UID: "v"}, q)},
		"group and verb": {decisionKey(Caller{Name: "u", Groups: []string{"g"}}, Request{Verb: "get"}),
			decisionKey(Caller{Name: "u"}, Request{Verb: "g"})},
	} {
		if pair[0] == pair[1] {
			t.Errorf("%s: two callers share a key", name)
		}
	}
}

// keyBytes is how many bytes c's keys take.
func keyBytes[V any](c *ttlCache[V]) int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for k := range c.entries {
		n += len(k)
	}
	return n
}

// TestConcurrentMissesShareOneReview: a burst of requests with a new token makes one TokenReview.
func TestConcurrentMissesShareOneReview(t *testing.T) {
	clock := time.Unix(1000, 0)
	s := &apiServer{tokens: map[string]string{jwt("tok"): "sa"}, gate: make(chan struct{})}
	r := newReviewer(t, s, &clock)
	var wg sync.WaitGroup
	var started sync.WaitGroup
	for range 16 {
		started.Add(1)
		wg.Go(func() {
			started.Done()
			if c, err := r.Authenticate(context.Background(), jwt("tok")); err != nil || c.Name != "sa" {
				t.Errorf("Authenticate = %+v, %v", c, err)
			}
		})
	}
	started.Wait()
	for s.reviews.Load() == 0 {
		time.Sleep(time.Millisecond) // the first review has reached the API server
	}
	close(s.gate)
	wg.Wait()
	if n := s.reviews.Load(); n > 2 {
		// A goroutine scheduled only after the first review finished finds the answer cached; one
		// that raced past the cache before the review began may join it or, rarely, follow it.
		t.Errorf("%d token reviews for 16 concurrent requests; want them shared", n)
	}
}
