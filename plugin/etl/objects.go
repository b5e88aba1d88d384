package etl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/plugin/internal/cli"
)

// objectClient calls the object API (api/wire/objects.go) of one agent, reached through one
// port-forward, with one data path token: cp, ls, rm and cat share it.
type objectClient struct {
	hc *http.Client
	// base leads to the agent ("http://127.0.0.1:PORT").
	base  string
	token string
	// namespace and serviceAccount are who the token speaks for, named in refusals.
	namespace, serviceAccount string
	// store, when set, makes List list that ObjectStore of the namespace (wire.PathStores).
	store string
}

// openObjects reaches the object API of the namespace of --namespace: one token of
// serviceAccount, one port-forward to any Ready agent. It returns the forwarder for requests that
// must reach one node's agent, and a function that closes the forward.
func openObjects(ctx context.Context, env *cli.Env, dp dataPath, serviceAccount string) (*objectClient, AgentForwarder, func(), error) {
	ns, _, err := env.Clients.Namespace()
	if err != nil {
		return nil, nil, nil, err
	}
	issuer, forwarder, hc, err := dp()
	if err != nil {
		return nil, nil, nil, err
	}
	token, err := issuer.Token(ctx, ns, serviceAccount)
	if err != nil {
		return nil, nil, nil, err
	}
	base, stop, err := forwarder.Forward(ctx, "")
	if err != nil {
		return nil, nil, nil, err
	}
	c := &objectClient{hc: hc, base: base, token: token, namespace: ns, serviceAccount: serviceAccount}
	return c, forwarder, stop, nil
}

// objectArg is an object or prefix as written on the command line: "etl:raw/a.txt", or for the
// commands that take only objects "raw/a.txt".
func objectArg(arg string) string { return strings.TrimPrefix(arg, remoteScheme) }

// remoteScheme marks an argument of cp and rm as the namespace's objects rather than a local path
// or a Transform: no Transform name has a colon.
const remoteScheme = "etl:"

// objectURL is the URL of object (a prefix ending in "/" for a list) with query q.
func (c *objectClient) objectURL(object string, q url.Values) string {
	u := c.base + wire.PathObjects + c.namespace
	if c.store != "" {
		u = c.base + wire.PathStores + c.namespace + "/" + url.PathEscape(c.store)
	}
	if object == "" {
		u += "/"
	} else {
		u += wire.ObjectPath(object)
	}
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// newRequest is a request about object (the list when empty) with query q, carrying the token.
func (c *objectClient) newRequest(ctx context.Context, method, object string, q url.Values, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.objectURL(object, q), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	return req, nil
}

// send sends req about object and returns the answer when it is a success; any other answer
// becomes a refusal that says what to do.
func (c *objectClient) send(req *http.Request, object string) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("calling the data path agent: %w", err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return nil, c.refusal(req.Method, object, resp.StatusCode, strings.TrimSpace(string(msg)))
}

// do is send for a request without a body.
func (c *objectClient) do(ctx context.Context, method, object string, q url.Values) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, object, q, nil)
	if err != nil {
		return nil, err
	}
	return c.send(req, object)
}

// Put stores body, of size bytes with SHA-256 checksum (hex), as object; the agent verifies the
// checksum before the object becomes visible.
func (c *objectClient) Put(ctx context.Context, object string, body io.Reader, size int64, checksum string) error {
	req, err := c.newRequest(ctx, http.MethodPut, object, nil, io.NopCloser(body))
	if err != nil {
		return err
	}
	// The length goes ahead of the body, so the agent can refuse one too large at once.
	req.ContentLength = size
	if size == 0 {
		req.Body = http.NoBody
	}
	req.Header.Set(wire.HeaderChecksum, checksum)
	resp, err := c.send(req, object)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Get opens object for reading, with its description from the answer's headers.
func (c *objectClient) Get(ctx context.Context, object string) (io.ReadCloser, wire.ObjectInfo, error) {
	resp, err := c.do(ctx, http.MethodGet, object, nil)
	if err != nil {
		return nil, wire.ObjectInfo{}, err
	}
	return resp.Body, infoOf(object, resp), nil
}

// Head describes object: its size, checksum (when the agent knows it) and node.
func (c *objectClient) Head(ctx context.Context, object string) (wire.ObjectInfo, error) {
	resp, err := c.do(ctx, http.MethodHead, object, nil)
	if err != nil {
		return wire.ObjectInfo{}, err
	}
	resp.Body.Close()
	return infoOf(object, resp), nil
}

func infoOf(object string, resp *http.Response) wire.ObjectInfo {
	info := wire.ObjectInfo{Name: object, Size: resp.ContentLength,
		Checksum: resp.Header.Get(wire.HeaderChecksum), Node: resp.Header.Get(wire.HeaderNode)}
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		info.Modified = t
	}
	return info
}

// Delete removes object, or with recursive every object under the prefix object.
func (c *objectClient) Delete(ctx context.Context, object string, recursive bool) error {
	var q url.Values
	if recursive {
		q = url.Values{wire.QueryRecursive: {"true"}}
	}
	resp, err := c.do(ctx, http.MethodDelete, object, q)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// List returns the objects whose names start with prefix, following Next through every page;
// with a delimiter, the names it groups come as prefixes, as a directory listing shows them. A
// limit above zero stops after that many entries.
func (c *objectClient) List(ctx context.Context, prefix, delimiter string, limit int) (wire.ObjectList, error) {
	// A list of nothing prints its items as [], as the agent sends them.
	all := wire.ObjectList{Items: []wire.ObjectInfo{}}
	q := url.Values{wire.QueryPrefix: {prefix}}
	if delimiter != "" {
		q.Set(wire.QueryDelimiter, delimiter)
	}
	for {
		page, err := c.listPage(ctx, q)
		if err != nil {
			return wire.ObjectList{}, err
		}
		all.Items = append(all.Items, page.Items...)
		all.Prefixes = append(all.Prefixes, page.Prefixes...)
		if limit > 0 && len(all.Items)+len(all.Prefixes) >= limit {
			all.Next = page.Next
			return all, nil
		}
		if page.Next == "" {
			return all, nil
		}
		q.Set(wire.QueryAfter, page.Next)
	}
}

func (c *objectClient) listPage(ctx context.Context, q url.Values) (wire.ObjectList, error) {
	var page wire.ObjectList
	resp, err := c.do(ctx, http.MethodGet, "", q)
	if err != nil {
		return page, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return page, fmt.Errorf("reading the list of objects: %w", err)
	}
	return page, nil
}

// transformStored sends object through pipeline, with args, into out, on the node that holds it:
// the agent there reads the object and sends it through the pipeline's transformers, and only the
// result crosses the network.
func (c *objectClient) transformStored(ctx context.Context, forwarder AgentForwarder, pipeline, object, args string, out io.Writer) error {
	info, err := c.Head(ctx, object)
	if err != nil {
		return err
	}
	if info.Node == "" {
		return fmt.Errorf("the data path agent did not say which node holds object %s", object)
	}
	base, stop, err := forwarder.Forward(ctx, info.Node)
	if err != nil {
		return err
	}
	defer stop()
	r := objectRequest{base: base, namespace: c.namespace, pipeline: pipeline, object: object, args: args, token: c.token,
		serviceAccount: c.serviceAccount}
	return transformRequest(ctx, c.hc, r, http.MethodGet, nil, out)
}

// refusal explains an answer of the object API other than a success.
func (c *objectClient) refusal(method, object string, code int, msg string) error {
	sa, answer := c.namespace+":"+c.serviceAccount, strconv.Itoa(code)
	if msg != "" {
		answer += ": " + msg
	}
	what := "object " + object
	if object == "" {
		what = "the objects"
	}
	if c.store != "" {
		if err := c.storeRefusal(code, answer); err != nil {
			return err
		}
		what = "the objects of ObjectStore " + c.store
	}
	switch code {
	case http.StatusForbidden:
		verb, role := objectVerb(method, object)
		return fmt.Errorf("ServiceAccount %s may not %s objects in namespace %s (%s); bind it to %s: %s (docs/datapath-rbac.md), or pass --service-account",
			sa, verb, c.namespace, answer, role, bindCommand(c.namespace, c.serviceAccount, c.serviceAccount+"-datapath-"+verb, role))
	case http.StatusNotFound:
		return fmt.Errorf("no %s in namespace %s (%s); see kubectl etl ls", what, c.namespace, answer)
	case http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%s is larger than the agent accepts (%s)", what, answer)
	case http.StatusInsufficientStorage:
		return fmt.Errorf("no room for %s on its node (%s); free space with kubectl etl rm, or store it on another node", what, answer)
	}
	return agentRefusal(sa, code, msg, fmt.Sprintf("%s %s", method, what))
}

// storeRefusal explains the refusals particular to listing an ObjectStore; nil for the others.
func (c *objectClient) storeRefusal(code int, answer string) error {
	switch code {
	case http.StatusForbidden:
		sa := c.namespace + ":" + c.serviceAccount
		return fmt.Errorf("ServiceAccount %s may not get ObjectStore %s in namespace %s (%s), which listing its objects needs; bind it to %s: %s (docs/datapath-rbac.md), or pass --service-account",
			sa, c.store, c.namespace, answer, viewerRole, bindCommand(c.namespace, c.serviceAccount, c.serviceAccount+"-datapath-list", viewerRole))
	case http.StatusNotFound:
		return fmt.Errorf("no ObjectStore %s in namespace %s (%s); kubectl get objectstores lists the namespace's", c.store, c.namespace, answer)
	case http.StatusBadGateway:
		return fmt.Errorf("ObjectStore %s cannot be listed (%s)", c.store, answer)
	}
	return nil
}

// objectVerb is the RBAC verb of a request of the object API, and the data path ClusterRole that
// grants it: mlkube-datapath-viewer reads, mlkube-datapath-user writes too.
func objectVerb(method, object string) (verb, role string) {
	switch {
	case method == http.MethodPut:
		return "create", userRole
	case method == http.MethodDelete:
		return wire.VerbDelete, userRole
	case object == "":
		return wire.VerbList, viewerRole
	}
	return "get", viewerRole
}
