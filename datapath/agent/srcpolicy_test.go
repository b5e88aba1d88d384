package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/egress"
)

// upstreamSecret is what a source answers with its error; the agent must
// not hand it to the caller.
const upstreamSecret = "internal detail of the source"

// newCountingSource serves "/obj", a redirect to it at "/redirect" and a
// failure at "/fail", and counts every request that reaches it.
func newCountingSource(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/obj":
			io.WriteString(w, "payload")
		case "/redirect":
			http.Redirect(w, r, "/obj", http.StatusFound)
		default:
			http.Error(w, upstreamSecret, http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func srcPolicy(t *testing.T, hosts, allowed string) func(*Options) {
	return func(o *Options) {
		p, err := egress.Parse(hosts, "", allowed)
		if err != nil {
			t.Fatal(err)
		}
		o.Src = p
	}
}

// TestSrcPolicy checks that ?src= fetches only what the operator allowed,
// answering anything else 403 with the agent's JSON error naming the policy
// and its flag, before the source sees a request.
func TestSrcPolicy(t *testing.T) {
	srv, hits := newCountingSource(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for name, tc := range map[string]struct {
		policy   func(*Options)
		comm     etlv1alpha1.Communication
		arg      etlv1alpha1.Argument
		src      string
		wantCode int
		wantErr  string
		wantHits int64
	}{
		"off by default": {
			comm: etlv1alpha1.CommHPush, src: srv.URL + "/obj",
			wantCode: http.StatusForbidden, wantErr: "--src-allowed-hosts",
		},
		"off by default, handed to an hpull transformer": {
			comm: etlv1alpha1.CommHPull, arg: etlv1alpha1.ArgURL, src: srv.URL + "/obj",
			wantCode: http.StatusForbidden, wantErr: "--src-allowed-hosts",
		},
		"host not allowed": {
			policy: srcPolicy(t, "data.example.com", ""), comm: etlv1alpha1.CommWS, src: srv.URL + "/obj",
			wantCode: http.StatusForbidden, wantErr: "not among the allowed hosts",
		},
		"allowed name resolving to loopback": {
			policy: srcPolicy(t, "localhost", ""), comm: etlv1alpha1.CommHPush, src: "http://localhost" + port + "/obj",
			wantCode: http.StatusForbidden, wantErr: "loopback",
		},
		"redirect": {
			policy: allowLoopbackSrc(t), comm: etlv1alpha1.CommHPush, src: srv.URL + "/redirect",
			wantCode: http.StatusForbidden, wantErr: "redirect", wantHits: 1,
		},
		"allowed": {
			policy: allowLoopbackSrc(t), comm: etlv1alpha1.CommWS, src: srv.URL + "/obj",
			wantCode: http.StatusOK, wantHits: 1,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var configure []func(*Options)
			if tc.policy != nil {
				configure = append(configure, tc.policy)
			}
			e := newEnv(t, configure...)
			e.addTransform("t", tc.comm, tc.arg, echo)
			hits.Store(0)
			a := e.get("t", "obj", wire.Query{Src: tc.src})
			if a.status != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", a.status, tc.wantCode, a.body)
			}
			if got := hits.Load(); got != tc.wantHits {
				t.Errorf("the source saw %d requests, want %d", got, tc.wantHits)
			}
			if tc.wantCode == http.StatusOK {
				return
			}
			got := a.apiError(t)
			if got.Transform != "default/t" || got.Object != "obj" || got.Node != testNode {
				t.Errorf("error %+v does not name the transform, object and node", got)
			}
			if !strings.Contains(got.Error, "egress policy") || !strings.Contains(got.Error, tc.wantErr) {
				t.Errorf("error %q does not name the egress policy and %q", got.Error, tc.wantErr)
			}
		})
	}
}

// TestSrcUpstreamErrorByStatusOnly: a source's error answer is reported by
// its status; its body is never handed to the caller.
func TestSrcUpstreamErrorByStatusOnly(t *testing.T) {
	srv, _ := newCountingSource(t)
	e := newEnv(t, allowLoopbackSrc(t))
	e.addTransform("t", etlv1alpha1.CommHPush, "", echo)
	a := e.get("t", "obj", wire.Query{Src: srv.URL + "/fail"})
	if a.status != http.StatusBadGateway {
		t.Fatalf("status %d, want 502: %s", a.status, a.body)
	}
	if strings.Contains(string(a.body), upstreamSecret) {
		t.Errorf("the answer echoes the source's body: %s", a.body)
	}
	if got := a.apiError(t).Error; !strings.Contains(got, "500") {
		t.Errorf("error %q does not name the source's status", got)
	}
}
