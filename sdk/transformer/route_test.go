package transformer

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRoute(t *testing.T) {
	cases := map[string]struct {
		method     string
		target     string
		length     int64
		want       request
		wantStatus int
	}{
		"health":                {method: "GET", target: "/health", want: request{kind: kindHealth}},
		"ws":                    {method: "GET", target: "/ws", want: request{kind: kindWS}},
		"hpush":                 {method: "PUT", target: "/a/b%20c?args=x", length: 3, want: request{object: "a/b c", args: "x"}},
		"hpush object health":   {method: "PUT", target: "/health", length: 1, want: request{object: "health"}},
		"hpush fqn":             {method: "PUT", target: "/o?fqn=%2Fd%2Fo", want: request{object: "o", source: fromFQN, ref: "/d/o"}},
		"hpull src":             {method: "GET", target: "/ws?src=http%3A%2F%2Fa%2Fo&args=y", want: request{object: "ws", args: "y", source: fromSrc, ref: "http://a/o"}},
		"hpull fqn":             {method: "GET", target: "/x%2Fy?fqn=f", want: request{object: "x/y", source: fromFQN, ref: "f"}},
		"get without source":    {method: "GET", target: "/o", wantStatus: http.StatusBadRequest},
		"fqn and src":           {method: "GET", target: "/o?fqn=f&src=http%3A%2F%2Fa", wantStatus: http.StatusBadRequest},
		"put with src":          {method: "PUT", target: "/o?src=http%3A%2F%2Fa", wantStatus: http.StatusBadRequest},
		"put fqn with body":     {method: "PUT", target: "/o?fqn=f", length: 1, wantStatus: http.StatusBadRequest},
		"put without object":    {method: "PUT", target: "/", wantStatus: http.StatusBadRequest},
		"post":                  {method: "POST", target: "/o", wantStatus: http.StatusMethodNotAllowed},
		"get root with src":     {method: "GET", target: "/?src=http%3A%2F%2Fa", wantStatus: http.StatusBadRequest},
		"put with unknown size": {method: "PUT", target: "/o", length: -1, want: request{object: "o"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := url.ParseRequestURI(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			got, err := route(tc.method, u.EscapedPath(), u.Query(), tc.length)
			if tc.wantStatus != 0 {
				if err == nil || statusOf(err) != tc.wantStatus {
					t.Fatalf("route = %+v, %v; want status %d", got, err, tc.wantStatus)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(request{})); diff != "" {
				t.Errorf("route (-want +got):\n%s", diff)
			}
		})
	}
}
