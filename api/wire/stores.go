package wire

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// The store origins of an hpull transformer (docs/design/object-stores.md, "Transformers reading
// the store themselves"): a Transform of communication hpull and argument url may be handed, as
// ?src=, a presigned GET of an object of an ObjectStore of its namespace instead of the agent's
// in-flight URL. The transformer fetches such a src only from the origins the manager lists in
// its token Secret, so that whoever holds the Transform's token cannot point it anywhere else.
const (
	// TransformerStoresKey is the key of the token Secret, and its file in TransformerTokenDir,
	// listing the origins of the ObjectStores of the Transform's namespace, one per line as
	// StoreOrigin writes them, sorted. The manager rewrites it as stores come and go.
	TransformerStoresKey = "stores"
	// MaxStoreOrigins bounds the lines of the file a transformer reads.
	MaxStoreOrigins = 1024
)

// StoreOrigin is the origin that requests to bucket of the S3 endpoint go to, "scheme://host:port"
// (host lower-case, port explicit): with virtualHost the bucket is part of the host name.
func StoreOrigin(endpoint, bucket string, virtualHost bool) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("endpoint %q is not an http(s) URL of a host", endpoint)
	}
	if virtualHost {
		u.Host = bucket + "." + u.Host
	}
	return URLOrigin(u), nil
}

// URLOrigin is u's origin in StoreOrigin's form; the port is the scheme's when u names none.
func URLOrigin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// presignedSecrets are the query parameters of a presigned S3 URL that must not reach a log, an
// event or a status: the signature is the URL's capability; the credential names the key and
// the security token is one.
var presignedSecrets = []string{"x-amz-signature", "x-amz-credential", "x-amz-security-token"}

// RedactPresigned replaces, in a message that may quote presigned URLs, the value of each of
// their secret query parameters by "REDACTED", whether the URL is quoted as it is or
// query-escaped inside another URL.
func RedactPresigned(msg string) string {
	lower := strings.ToLower(msg)
	var b strings.Builder
	last := 0
	for i := 0; i < len(lower); i++ {
		end := secretValueAt(lower, i)
		if end < 0 {
			continue
		}
		b.WriteString(msg[last:i])
		b.WriteString("REDACTED")
		last, i = end, end-1
	}
	if last == 0 {
		return msg
	}
	b.WriteString(msg[last:])
	return b.String()
}

// secretValueAt returns, when lower[i:] starts a secret parameter's value (just after its
// "name=" or escaped "name%3d"), where the value ends; -1 otherwise.
func secretValueAt(lower string, i int) int {
	var eq int
	switch {
	case i >= 1 && lower[i-1] == '=':
		eq = i - 1
	case i >= 3 && lower[i-3:i] == "%3d":
		eq = i - 3
	default:
		return -1
	}
	named := false
	for _, p := range presignedSecrets {
		if strings.HasSuffix(lower[:eq], p) {
			named = true
			break
		}
	}
	if !named {
		return -1
	}
	end := i
	for end < len(lower) && !strings.ContainsRune("&\"' \t\n<>)", rune(lower[end])) && !strings.HasPrefix(lower[end:], "%26") {
		end++
	}
	return end
}
