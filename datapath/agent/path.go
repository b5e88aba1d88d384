package agent

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/status"
)

// Paths of the agent's API.
const (
	PathTransform = wire.PathTransform
	PathMetrics   = "/metrics"
	PathHealth    = "/healthz"
)

// transformPath is a parsed /v1/transform/{namespace}/{name}/{object...}.
type transformPath struct {
	namespace string
	// pipeline holds the Transform names in the order they apply.
	pipeline []string
	object   string
}

// namespaceName is "namespace/name" with {name} as the client wrote it, for
// error messages; "" when the path did not parse that far.
func (p transformPath) namespaceName() string {
	if len(p.pipeline) == 0 {
		return ""
	}
	return p.namespace + "/" + strings.Join(p.pipeline, wire.PipelineSeparator)
}

// parseTransformPath parses the escaped path of an inline request. The object
// may contain escaped slashes; the namespace and names may not.
func parseTransformPath(escapedPath string) (transformPath, error) {
	rest, ok := strings.CutPrefix(escapedPath, PathTransform)
	if !ok {
		return transformPath{}, fmt.Errorf("path %q is not under %s", escapedPath, PathTransform)
	}
	ns, rest, _ := strings.Cut(rest, "/")
	name, escObject, _ := strings.Cut(rest, "/")
	p, err := parsePipeline(ns, name)
	if err != nil {
		return transformPath{}, err
	}
	if p.object, err = parseObject(escObject); err != nil {
		return transformPath{}, err
	}
	return p, nil
}

// parsePipeline parses the escaped {namespace} and {name} segments of a
// path. Each stage must be a Transform's name, as the namespace a namespace's,
// before anything is reviewed: the names go into every review and its cached
// answer, and a name no object can have would only cost the API server one.
func parsePipeline(ns, name string) (transformPath, error) {
	var p transformPath
	var err error
	if p.namespace, err = parseNamespace(ns); err != nil {
		return transformPath{}, err
	}
	p.pipeline = wire.SplitPipeline(unescape(name))
	if len(p.pipeline) > wire.MaxPipelineStages {
		return transformPath{}, fmt.Errorf("pipeline of more than %d stages: at most %d are allowed; split it into several requests", wire.MaxPipelineStages, wire.MaxPipelineStages)
	}
	for _, n := range p.pipeline {
		if n == "" {
			return transformPath{}, fmt.Errorf("transform name is empty: name a Transform, or a pipeline of them joined by %q", wire.PipelineSeparator)
		}
		if err := checkName("transform name", n, validation.DNS1123SubdomainMaxLength, validation.IsDNS1123Subdomain); err != nil {
			return transformPath{}, err
		}
	}
	return p, nil
}

// parseNamespace unescapes the {namespace} segment ns. A namespace names its
// directory of the data root too: only a valid name (no "..", no "/") may.
func parseNamespace(ns string) (string, error) {
	namespace := unescape(ns)
	if err := checkName("namespace", namespace, validation.DNS1123LabelMaxLength, validation.IsDNS1123Label); err != nil {
		return "", err
	}
	return namespace, nil
}

// unescape is the path segment s unescaped, or s itself when its escapes are
// not valid: then it holds a "%", which no Kubernetes name does.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// checkName refuses s unless the Kubernetes check valid accepts it as the
// field's value. A name over max bytes is refused by its length, not echoed:
// the error of a 60 KiB name would be as long.
func checkName(field, s string, max int, valid func(string) []string) error {
	if len(s) > max {
		return fmt.Errorf("%s of %d bytes is too long: at most %d bytes (a Kubernetes name)", field, len(s), max)
	}
	if msgs := valid(s); len(msgs) > 0 {
		return fmt.Errorf("%s %q: %s", field, s, strings.Join(msgs, "; "))
	}
	return nil
}

// parseObject unescapes an object name and checks it is a path that stays
// under the data root.
func parseObject(escaped string) (string, error) {
	object, err := url.PathUnescape(escaped)
	if err != nil {
		return "", fmt.Errorf("object %q: %w", escaped, err)
	}
	return object, wire.CheckObject(object)
}

// checkArgs refuses args over wire.MaxArgs, for every mechanism, before they
// reach a transformer: over ws they share a connection with other clients'
// objects, and a control message the transformer refuses would close it.
func checkArgs(args string) error {
	if len(args) > wire.MaxArgs {
		return status.BadRequest(fmt.Errorf("args of %d bytes are over the limit of %d bytes (wire.MaxArgs); shorten them, larger settings belong in the Transform's spec", len(args), wire.MaxArgs))
	}
	return nil
}
