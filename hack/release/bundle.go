package main

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	sigsyaml "sigs.k8s.io/yaml"
)

// docSeparator separates the objects of install.yaml, as kustomize and render-install.sh write it.
const docSeparator = "\n---\n"

// mlkubeRef matches an mlkube image reference wherever the bundle may name one: an image field, a
// flag's value, a quoted string. A preceding "/" (a registry's path, /var/lib/mlkube) is not one.
var mlkubeRef = regexp.MustCompile(`(?:^|[\s"'=,])(mlkube/[a-z0-9][a-z0-9._/-]*(?::[A-Za-z0-9_][A-Za-z0-9_.-]*)?(?:@sha256:[a-f0-9]{64})?)`)

// renderBundle returns bundle (manifests/install.yaml) with every image that pins maps (a
// development reference, mlkube/manager:dev) replaced by its pinned reference, and managerArgs
// appended to the container that runs managerRef. It fails, returning nothing, when the bundle
// names an mlkube image pins does not replace, or when no container runs managerRef: a release
// bundle pulls only what the release pushed.
func renderBundle(bundle []byte, header string, pins map[string]string, managerRef string, managerArgs []string) ([]byte, error) {
	docs := strings.Split(string(bundle), docSeparator)
	managers := 0
	for i, doc := range docs {
		out, n, err := pinDocument(doc, pins, managerRef, managerArgs)
		if err != nil {
			return nil, fmt.Errorf("object %d of the bundle: %w", i+1, err)
		}
		docs[i], managers = out, managers+n
	}
	if managers != 1 {
		return nil, fmt.Errorf("%d containers run %s, want 1: the manager's image flags need exactly one", managers, managerRef)
	}
	rendered := strings.Join(docs, docSeparator)
	if err := checkPinned(rendered, pins); err != nil {
		return nil, err
	}
	return []byte(header + rendered), nil
}

// pinDocument pins the images of the pod template of one object of the bundle and reports how many
// of its containers run managerRef. An object without a pinned image is returned as it was.
func pinDocument(doc string, pins map[string]string, managerRef string, managerArgs []string) (string, int, error) {
	if !mlkubeRef.MatchString(doc) {
		return doc, 0, nil
	}
	// Comment lines before the object (the bundle's header) are kept as they are.
	var comments strings.Builder
	body := doc
	for strings.HasPrefix(body, "#") {
		line, rest, _ := strings.Cut(body, "\n")
		comments.WriteString(line + "\n")
		body = rest
	}
	var obj map[string]any
	if err := sigsyaml.Unmarshal([]byte(body), &obj); err != nil {
		return "", 0, err
	}
	spec := podSpec(obj)
	if spec == nil {
		return doc, 0, nil // checkPinned names any image left
	}
	changed, managers := false, 0
	for _, field := range []string{"initContainers", "containers"} {
		list, _ := spec[field].([]any)
		for _, c := range list {
			container, _ := c.(map[string]any)
			image, _ := container["image"].(string)
			pinned, ok := pins[image]
			if !ok {
				continue
			}
			if image == managerRef {
				args, _ := container["args"].([]any)
				for _, a := range managerArgs {
					args = append(args, a)
				}
				container["args"] = args
				managers++
			}
			container["image"] = pinned
			changed = true
		}
	}
	if !changed {
		return doc, 0, nil
	}
	out, err := sigsyaml.Marshal(obj)
	if err != nil {
		return "", 0, err
	}
	rendered := comments.String() + string(out)
	if !strings.HasSuffix(body, "\n") {
		rendered = strings.TrimSuffix(rendered, "\n")
	}
	return rendered, managers, nil
}

// podSpec returns the pod template's spec of a workload object, or nil.
func podSpec(obj map[string]any) map[string]any {
	path := []string{"spec", "template", "spec"}
	switch obj["kind"] {
	case "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job":
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "Pod":
		path = []string{"spec"}
	default:
		return nil
	}
	m := obj
	for _, key := range path {
		if m, _ = m[key].(map[string]any); m == nil {
			return nil
		}
	}
	return m
}

// checkPinned fails, naming each, when rendered still names an mlkube image that is not one of
// the pinned references.
func checkPinned(rendered string, pins map[string]string) error {
	pinned := map[string]bool{}
	for _, p := range pins {
		pinned[p] = true
	}
	var errs []error
	for n, line := range strings.Split(rendered, "\n") {
		for _, m := range mlkubeRef.FindAllStringSubmatch(line, -1) {
			if !pinned[m[1]] {
				errs = append(errs, fmt.Errorf("line %d names image %s, which the release does not build and push (released: %s)",
					n+1, m[1], strings.Join(slices.Sorted(maps.Keys(pins)), ", ")))
			}
		}
	}
	return errors.Join(errs...)
}
