package main

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/internal/images"
)

// chartValues are values of manifests/chart/mlkube that install what the release pushed, as its
// install.yaml does: the manager and the node agent pinned by digest, and the manager given the
// pinned io shim and code runtimes.
func chartValues(version string, pushed []pushedImage) ([]byte, error) {
	byDev := map[string]pushedImage{}
	for _, p := range pushed {
		byDev[p.DevRef] = p
	}
	image := func(dev string) (map[string]any, error) {
		p, ok := byDev[dev]
		if !ok {
			return nil, fmt.Errorf("chart values: %s is not among the released images", dev)
		}
		repo, tag, ok := strings.Cut(p.Ref, ":"+version)
		if !ok || tag != "" {
			return nil, fmt.Errorf("chart values: %s is not tagged %s", p.Ref, version)
		}
		// The chart joins registry and repository; the whole pushed repository is the latter.
		return map[string]any{"registry": "", "repository": repo, "tag": version, "digest": p.Digest.String()}, nil
	}
	manager, err := image(images.Manager.Ref)
	if err != nil {
		return nil, err
	}
	agent, err := image(images.NodeAgent.Ref)
	if err != nil {
		return nil, err
	}
	args, err := managerArgs(pins(pushed))
	if err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(map[string]any{
		"manager": map[string]any{"image": manager, "extraArgs": args},
		"agent":   map[string]any{"image": agent},
	})
	if err != nil {
		return nil, err
	}
	header := fmt.Sprintf("# mlkube %s: values for manifests/chart/mlkube that install the images make release pushed,\n"+
		"# pinned by digest, as install.yaml does: helm install mlkube manifests/chart/mlkube -f values.yaml\n", version)
	return append([]byte(header), out...), nil
}
