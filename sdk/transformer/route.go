package transformer

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mlkube/mlkube/api/wire"
)

type kind int

const (
	kindObject kind = iota
	kindHealth
	kindWS
)

// source says where the bytes of an object come from.
type source int

const (
	fromBody source = iota
	fromFQN
	fromSrc
)

// request is what a routed HTTP request asks for.
type request struct {
	kind   kind
	object string
	args   string
	source source
	// ref is the fqn path or the src URL, as source says.
	ref string
}

// route classifies a request by method, escaped path and query. An object
// request always carries a body (PUT) or a src/fqn parameter (GET), so objects
// named "health" or "ws" never collide with the two fixed paths.
func route(method, escapedPath string, query url.Values, contentLength int64) (request, error) {
	q := wire.ParseQuery(query)
	switch method {
	case http.MethodGet:
		if q.FQN == "" && q.Src == "" {
			switch escapedPath {
			case wire.PathHealth:
				return request{kind: kindHealth}, nil
			case wire.PathWS:
				return request{kind: kindWS}, nil
			}
			return request{}, badRequest(fmt.Errorf("GET of an object needs ?%s= or ?%s=", wire.QuerySrc, wire.QueryFQN))
		}
	case http.MethodPut:
		if q.Src != "" {
			return request{}, badRequest(fmt.Errorf("PUT carries the object; ?%s= is for GET", wire.QuerySrc))
		}
		if q.FQN != "" && contentLength > 0 {
			return request{}, badRequest(fmt.Errorf("PUT with ?%s= takes an empty body", wire.QueryFQN))
		}
	default:
		return request{}, StatusError(http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", method))
	}
	if q.FQN != "" && q.Src != "" {
		return request{}, badRequest(errors.New("give ?fqn= or ?src=, not both"))
	}
	object, err := wire.ParseObjectPath(escapedPath)
	if err != nil {
		return request{}, badRequest(err)
	}
	req := request{kind: kindObject, object: object, args: q.Args}
	switch {
	case q.FQN != "":
		req.source, req.ref = fromFQN, q.FQN
	case q.Src != "":
		req.source, req.ref = fromSrc, q.Src
	}
	return req, nil
}
