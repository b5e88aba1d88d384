package manager

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHardenTLS serves with the webhook server's TLS settings and checks what a client can
// negotiate: TLS 1.1 is refused, and a client asking for HTTP/2 gets HTTP/1.1.
func TestHardenTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(r.Proto))
	}))
	srv.EnableHTTP2 = true // what hardenTLS must undo
	srv.StartTLS()
	defer srv.Close()
	hardenTLS(srv.TLS)

	cases := map[string]struct {
		maxVersion uint16
		wantErr    bool
		wantProto  string
	}{
		"TLS 1.1 is refused":      {maxVersion: tls.VersionTLS11, wantErr: true},
		"TLS 1.2 speaks HTTP/1.1": {maxVersion: tls.VersionTLS12, wantProto: "http/1.1"},
		"TLS 1.3 speaks HTTP/1.1": {maxVersion: tls.VersionTLS13, wantProto: "http/1.1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{
				InsecureSkipVerify: true, //nolint:gosec // a test server's self-signed certificate
				MinVersion:         tls.VersionTLS10,
				MaxVersion:         tc.maxVersion,
				NextProtos:         []string{"h2", "http/1.1"},
			})
			if tc.wantErr {
				if err == nil {
					conn.Close()
					t.Fatal("the handshake succeeded; want it refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if got := conn.ConnectionState().NegotiatedProtocol; got != tc.wantProto {
				t.Errorf("negotiated %q; want %q", got, tc.wantProto)
			}
		})
	}
}
