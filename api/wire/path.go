package wire

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNoObject is returned for a request that names no object.
var ErrNoObject = errors.New("no object name")

// ObjectPath returns the request path for object: "/" followed by the object
// name with every segment between slashes percent-escaped. Slashes stay
// readable separators; "%", spaces, "?" and "#" are escaped; "." and ".."
// segments are escaped as well so that no proxy or client library cleans them
// away and the name arrives exactly as sent.
func ObjectPath(object string) string {
	var b strings.Builder
	b.Grow(len(object) + 1)
	for seg := range strings.SplitSeq(object, "/") {
		b.WriteByte('/')
		switch seg {
		case ".":
			b.WriteString("%2E")
		case "..":
			b.WriteString("%2E%2E")
		default:
			b.WriteString(url.PathEscape(seg))
		}
	}
	return b.String()
}

// ParseObjectPath returns the object named by an escaped request path (as
// url.URL.EscapedPath returns it). It accepts any escaping of the name,
// including "%2F" for slashes, and is the inverse of ObjectPath.
func ParseObjectPath(escapedPath string) (string, error) {
	rest, ok := strings.CutPrefix(escapedPath, "/")
	if !ok {
		return "", fmt.Errorf("path %q does not start with /", escapedPath)
	}
	object, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", escapedPath, err)
	}
	if object == "" {
		return "", ErrNoObject
	}
	return object, nil
}

// Query is the query of an object request. At most one of FQN and Src is set;
// with neither, the object is the request body.
type Query struct {
	Args string
	FQN  string
	Src  string
}

// ParseQuery extracts the object query parameters from v.
func ParseQuery(v url.Values) Query {
	return Query{Args: v.Get(QueryArgs), FQN: v.Get(QueryFQN), Src: v.Get(QuerySrc)}
}

// Encode returns the query string (without "?") carrying the non-empty fields.
func (q Query) Encode() string {
	v := url.Values{}
	for _, kv := range [...][2]string{{QueryArgs, q.Args}, {QueryFQN, q.FQN}, {QuerySrc, q.Src}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v.Encode()
}

// ObjectURL returns the URL of object on the transformer at base (for example
// "http://10.0.0.7:8000"), with q as its query.
func ObjectURL(base, object string, q Query) string {
	u := strings.TrimSuffix(base, "/") + ObjectPath(object)
	if qs := q.Encode(); qs != "" {
		u += "?" + qs
	}
	return u
}

// MaxObjectName bounds an object name in bytes: S3's limit. Names end up in
// error records, status and logs, which must stay bounded.
const MaxObjectName = 1024

// CheckObject refuses object names that could leave the directory they are
// looked up in: empty, absolute, or with any ".." segment (even one that
// cleans away), names with NUL bytes, which no file system accepts, and names
// longer than MaxObjectName. Symlinks are for the opener to refuse.
func CheckObject(object string) error { return checkObject(object) }

// checkObject is CheckObject of a name as a string or as bytes, so that names made in a buffer
// are checked without a copy each.
func checkObject[S ~string | ~[]byte](object S) error {
	switch {
	case len(object) == 0:
		return ErrNoObject
	case len(object) > MaxObjectName:
		// The name itself is not quoted: the message must stay small.
		return fmt.Errorf("object name of %d bytes is too long: at most %d bytes are allowed; shorten it", len(object), MaxObjectName)
	case object[0] == '/':
		return fmt.Errorf("object %q is an absolute path", object)
	}
	for i := range len(object) {
		if object[i] == 0 {
			return fmt.Errorf("object %q contains a NUL byte", object)
		}
	}
	for seg := 0; seg < len(object); {
		end := seg // the path element is object[seg:end]
		for end < len(object) && object[end] != '/' {
			end++
		}
		if end-seg == 2 && object[seg] == '.' && object[seg+1] == '.' {
			return fmt.Errorf("object %q contains .. as a path element", object)
		}
		seg = end + 1
	}
	return nil
}
