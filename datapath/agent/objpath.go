package agent

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
)

// objectPath is a parsed /v1/objects/{namespace}/{object...}; object is empty
// for the namespace itself (the list).
type objectPath struct {
	namespace, object string
}

// parseObjectPath parses the escaped path of an object API request with the
// transform API's rules for namespaces and object names, and refuses hidden
// names (a segment starting with "."): the agent's temporary files and run
// journals are hidden, and no request may read or replace them.
func parseObjectPath(escapedPath string) (objectPath, error) {
	rest, ok := strings.CutPrefix(escapedPath, wire.PathObjects)
	if !ok {
		return objectPath{}, fmt.Errorf("path %q is not under %s", escapedPath, wire.PathObjects)
	}
	ns, escObject, ok := strings.Cut(rest, "/")
	if !ok {
		return objectPath{}, fmt.Errorf("path %q: want %s{namespace}/ to list or %s{namespace}/{object} for one object", escapedPath, wire.PathObjects, wire.PathObjects)
	}
	var p objectPath
	var err error
	if p.namespace, err = parseNamespace(ns); err != nil || escObject == "" {
		return p, err
	}
	if p.object, err = parseObject(escObject); err != nil {
		return objectPath{}, err
	}
	return p, checkVisible(p.object)
}

// checkVisible refuses a name with a hidden segment.
func checkVisible(name string) error {
	for seg := range strings.SplitSeq(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return fmt.Errorf("object %q has a segment starting with \".\": such names are the agent's own (temporary files, journals); rename it", name)
		}
	}
	return nil
}

// listQuery is a parsed list request: the objects whose names start with
// prefix and sort after after, at most limit of them, grouped at the first
// delimiter past the prefix when delimiter is set.
type listQuery struct {
	prefix, after, delimiter string
	limit                    int
}

// parseListQuery reads a list request's parameters: limit defaults to
// wire.MaxListLimit and is capped there; the strings are bounded as names are.
func parseListQuery(v url.Values) (listQuery, error) {
	q := listQuery{prefix: v.Get(wire.QueryPrefix), after: v.Get(wire.QueryAfter), delimiter: v.Get(wire.QueryDelimiter), limit: wire.MaxListLimit}
	for name, s := range map[string]string{wire.QueryPrefix: q.prefix, wire.QueryAfter: q.after, wire.QueryDelimiter: q.delimiter} {
		if len(s) > wire.MaxObjectName {
			return listQuery{}, fmt.Errorf("%s= of %d bytes is too long: at most %d bytes (wire.MaxObjectName)", name, len(s), wire.MaxObjectName)
		}
	}
	if s := v.Get(wire.QueryLimit); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return listQuery{}, fmt.Errorf("%s=%q: want a whole number from 1 to %d (wire.MaxListLimit)", wire.QueryLimit, s, wire.MaxListLimit)
		}
		q.limit = min(n, wire.MaxListLimit)
	}
	return q, nil
}

// encode returns the query string that asks for q again (to a peer).
func (q listQuery) encode() string {
	v := url.Values{wire.QueryLimit: {strconv.Itoa(q.limit)}}
	for k, s := range map[string]string{wire.QueryPrefix: q.prefix, wire.QueryAfter: q.after, wire.QueryDelimiter: q.delimiter} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

// key is what name sorts and pages as: the name itself, or, when q groups
// it, its prefix up to and including the delimiter; grouped reports which.
func (q listQuery) key(name string) (key string, grouped bool) {
	if q.delimiter == "" {
		return name, false
	}
	rest := name[len(q.prefix):]
	if i := strings.Index(rest, q.delimiter); i >= 0 {
		return name[:len(q.prefix)+i+len(q.delimiter)], true
	}
	return name, false
}
