package wire

import (
	"net/url"
	"testing"
)

func TestStoreOrigin(t *testing.T) {
	for _, tc := range []struct {
		endpoint, bucket string
		virtualHost      bool
		want             string
	}{
		{"http://s3.ns.svc:8333", "b", false, "http://s3.ns.svc:8333"},
		{"https://S3.Example.com", "b", false, "https://s3.example.com:443"},
		{"http://s3.example.com/", "b", false, "http://s3.example.com:80"},
		{"https://s3.example.com", "data", true, "https://data.s3.example.com:443"},
		{"http://[fd00::1]:9000", "b", false, "http://[fd00::1]:9000"},
	} {
		got, err := StoreOrigin(tc.endpoint, tc.bucket, tc.virtualHost)
		if err != nil || got != tc.want {
			t.Errorf("StoreOrigin(%q, %q, %v) = %q, %v; want %q", tc.endpoint, tc.bucket, tc.virtualHost, got, err, tc.want)
		}
	}
	for _, bad := range []string{"s3.example.com", "ftp://h", "http://", "://x"} {
		if got, err := StoreOrigin(bad, "b", false); err == nil {
			t.Errorf("StoreOrigin(%q) = %q, want an error", bad, got)
		}
	}
	u, _ := url.Parse("https://data.S3.example.com/k?X-Amz-Signature=x")
	if got, want := URLOrigin(u), "https://data.s3.example.com:443"; got != want {
		t.Errorf("URLOrigin = %q, want %q", got, want)
	}
}

func TestRedactPresigned(t *testing.T) {
	for in, want := range map[string]string{
		`Get "http://s3:9000/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20261128%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261128T000000Z&X-Amz-Expires=10&X-Amz-SignedHeaders=host&X-Amz-Signature=abcdef0123": EOF`: `Get "http://s3:9000/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20261128T000000Z&X-Amz-Expires=10&X-Amz-SignedHeaders=host&X-Amz-Signature=REDACTED": EOF`,
		"src=http%3A%2F%2Fs3%2Fb%2Fk%3Fx-amz-signature%3Ddeadbeef%26X-Amz-Security-Token%3Dtok end":                                                                                                                                        "src=http%3A%2F%2Fs3%2Fb%2Fk%3Fx-amz-signature%3DREDACTED%26X-Amz-Security-Token%3DREDACTED end",
		"no url here, X-Amz-Signature alone": "no url here, X-Amz-Signature alone",
		"X-Amz-Date=20261128T000000Z":        "X-Amz-Date=20261128T000000Z",
		"(X-Amz-Signature=ab)":               "(X-Amz-Signature=REDACTED)",
		"?X-Amz-Signature=":                  "?X-Amz-Signature=", // nothing to hide
	} {
		if got := RedactPresigned(in); got != want {
			t.Errorf("RedactPresigned(%q)\n= %q\nwant %q", in, got, want)
		}
	}
}
