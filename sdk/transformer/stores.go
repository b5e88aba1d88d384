package transformer

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
)

// maxStoresBytes bounds the stores file: wire.MaxStoreOrigins origins of 256 bytes, more than the
// "scheme://host:port" of any real host takes.
const maxStoresBytes = wire.MaxStoreOrigins * 256

// storesFile lists the origins of the ObjectStores of the Transform's namespace, which the manager
// writes into the Transform's token Secret (wire.TransformerStoresKey): the node agent may hand an
// hpull transformer, as src, a presigned GET of an object on one of them instead of an in-flight
// URL. The manager rewrites the list as stores come and go, so it is read again when it changes.
type storesFile struct{ file *watchedFile[map[string]bool] }

func newStoresFile(path string) *storesFile {
	return &storesFile{&watchedFile[map[string]bool]{path: path, limit: maxStoresBytes, parse: parseStoreOrigins}}
}

// parseStoreOrigins reads one origin a line, as wire.StoreOrigin writes them; blank lines and
// surrounding spaces are ignored. A list past wire.MaxStoreOrigins is an error rather than cut
// short, so that no store is left out without saying so.
func parseStoreOrigins(b []byte) (map[string]bool, error) {
	origins := map[string]bool{}
	n := 0
	for line := range strings.Lines(string(b)) {
		origin := strings.TrimSpace(line)
		if origin == "" {
			continue
		}
		if n++; n > wire.MaxStoreOrigins {
			return nil, fmt.Errorf("it lists more than %d origins", wire.MaxStoreOrigins)
		}
		origins[origin] = true
	}
	return origins, nil
}

// whyNot says why u is not a URL on one of the listed store origins, or "" when it is. Any path
// and query pass: the query of a presigned URL is its capability, which the store checks. A nil
// storesFile lists no origin.
func (s *storesFile) whyNot(u *url.URL) string {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "its scheme is not http or https"
	case u.Opaque != "" || u.Host == "":
		return "it names no host"
	case u.User != nil || u.Fragment != "":
		return "it has userinfo or a fragment"
	case s == nil:
		return "this transformer reads no stores file"
	}
	origin := wire.URLOrigin(u)
	origins, err := s.file.get()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("origin %s is not in %s, which does not exist: the namespace has no store", origin, s.file.path)
	case err != nil:
		return fmt.Sprintf("the stores file cannot be used, so no store src is fetched until the manager rewrites it: %v", err)
	case !origins[origin]:
		return fmt.Sprintf("origin %s is not in %s", origin, s.file.path)
	}
	return ""
}
