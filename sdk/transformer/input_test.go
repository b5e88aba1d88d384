package transformer

import (
	"net/http"
	"strings"
	"testing"

	"github.com/mlkube/mlkube/internal/h1client"
)

func TestRootRelative(t *testing.T) {
	cases := map[string]struct {
		fqn     string
		want    string
		wantErr bool
	}{
		"absolute inside":      {fqn: "/data/a/b", want: "a/b"},
		"absolute unclean":     {fqn: "/data/a/../b", want: "b"},
		"relative":             {fqn: "a/b", want: "a/b"},
		"the root":             {fqn: "/data", want: "."}, // a directory: openFQN refuses it
		"absolute outside":     {fqn: "/etc/passwd", wantErr: true},
		"absolute dotdot out":  {fqn: "/data/../etc/passwd", wantErr: true},
		"sibling prefix":       {fqn: "/database/x", wantErr: true},
		"relative dotdot out":  {fqn: "../x", wantErr: true},
		"relative dotdot deep": {fqn: "a/../../x", wantErr: true},
		"empty":                {fqn: "", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := rootRelative("/data", tc.fqn)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("rootRelative(/data, %q) = %q, %v; want %q, error %v", tc.fqn, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestSrcFailureStatus(t *testing.T) {
	for code, want := range map[int]int{
		http.StatusNotFound:            http.StatusNotFound,
		http.StatusForbidden:           http.StatusForbidden,
		http.StatusInternalServerError: http.StatusBadGateway,
		http.StatusFound:               http.StatusBadGateway,
	} {
		if got := srcFailureStatus(code); got != want {
			t.Errorf("srcFailureStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

// A proxy in the pod's environment (HTTP_PROXY) must not carry an hpull fetch away from the
// caller's in-flight URL; net/http never proxies loopback, so a served test could not show it.
func TestFetchClientIgnoresProxies(t *testing.T) {
	o := defaultOptions()
	// h1client dials the URL's host itself; what it does not carry goes to its fallback.
	h1, ok := o.client.Transport.(*h1client.Transport)
	if !ok {
		t.Fatalf("the fetch client's transport is a %T, want the data path's *h1client.Transport", o.client.Transport)
	}
	if tr, ok := h1.Fallback.(*http.Transport); !ok || tr.Proxy != nil {
		t.Error("the fetch client's fallback transport takes a proxy from the environment")
	}
	if o.client.CheckRedirect == nil {
		t.Error("the fetch client follows redirects")
	}
}

// checkSrc accepts the caller's in-flight URL however its address is written (no port, as the
// agent's Service port 80 would be; IPv4-mapped) and refuses ids of another length or alphabet.
func TestCheckSrcForms(t *testing.T) {
	id := "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:inflightIDLen-6] + "234567"
	for src, ok := range map[string]bool{
		"http://10.0.0.5" + "/v1/inflight/" + id:             true,
		"http://10.0.0.5:8080/v1/inflight/" + id:             true,
		"http://[::ffff:10.0.0.5]:8080/v1/inflight/" + id:    true,
		"http://10.0.0.5:8080/v1/inflight/" + id + "A":       false,
		"http://10.0.0.5:8080/v1/inflight/" + id[1:] + "0":   false, // 0, 1, 8 and 9 are not base32
		"http://10.0.0.5:8080/v1/inflight/" + id[1:] + "8":   false,
		"http://10.0.0.6:8080/v1/inflight/" + id:             false,
		"http://[::ffff:10.0.0.6]:8080/v1/inflight/" + id:    false,
		"http://10.0.0.5:8080/v1/inflight/" + id[:len(id)-1]: false,
		"http://10.0.0.5:8080/v1/inflight/" + id[1:] + "a":   false,
		"http://10.0.0.5:8080/v1/inflight/" + id[1:] + "=":   false,
		"http://10.0.0.5:8080/v1/inflight/" + id[1:] + "Z":   true,
	} {
		if err := checkSrc("10.0.0.5:41234", src, nil); (err == nil) != ok {
			t.Errorf("checkSrc(%q) = %v; want accepted %v", src, err, ok)
		}
	}
}

// Of an S3 error only the code and message reach the client, even when the answer was cut short:
// the other elements echo the request's signature and access key.
func TestSrcErrorText(t *testing.T) {
	const s3 = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match.</Message>` +
		`<AWSAccessKeyId>AKIDSECRET</AWSAccessKeyId><StringToSign>AWS4-HMAC-SHA256&#xA;20250101/us-east-1/s3/aws4_request</StringToSign>` +
		`<SignatureProvided>0123456789abcdef</SignatureProvided></Error>`
	long := strings.Repeat("x", 600)
	for name, tc := range map[string]struct{ body, want string }{
		"s3 error":           {body: s3, want: "SignatureDoesNotMatch: The request signature we calculated does not match."},
		"s3 error cut short": {body: s3[:strings.Index(s3, "<StringToSign>")+20], want: "SignatureDoesNotMatch: The request signature we calculated does not match."},
		"s3 error, entities": {body: `<Error><Code>NoSuchKey</Code><Message>a &amp; b</Message></Error>`, want: "NoSuchKey: a & b"},
		"text":               {body: "no such in-flight object", want: "no such in-flight object"},
		"long text":          {body: long, want: long[:512]},
		"other xml":          {body: "<Other><Code>X</Code></Other>", want: "<Other><Code>X</Code></Other>"},
		"empty":              {},
	} {
		t.Run(name, func(t *testing.T) {
			if got := srcErrorText([]byte(tc.body)); got != tc.want {
				t.Errorf("srcErrorText = %q, want %q", got, tc.want)
			}
		})
	}
}
