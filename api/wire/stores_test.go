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
