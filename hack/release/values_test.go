package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/internal/images"
)

func TestChartValuesPinTheReleasedImages(t *testing.T) {
	digest := func(c string) v1.Hash { return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat(c, 64)} }
	var pushed []pushedImage
	for i, s := range released() {
		n, err := imageName(s.Ref)
		if err != nil {
			t.Fatal(err)
		}
		pushed = append(pushed, pushedImage{DevRef: s.Ref, Ref: "10.250.0.1:5000/mlkube/" + n + ":v1.2.3", Digest: digest(string(rune('a' + i)))})
	}
	out, err := chartValues("v1.2.3", pushed)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Manager struct {
			Image     map[string]string `json:"image"`
			ExtraArgs []string          `json:"extraArgs"`
		} `json:"manager"`
		Agent struct {
			Image map[string]string `json:"image"`
		} `json:"agent"`
	}
	if err := yaml.UnmarshalStrict(out, &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := map[string]string{"registry": "", "repository": "10.250.0.1:5000/mlkube/manager", "tag": "v1.2.3", "digest": digest("a").String()}
	if diff := cmp.Diff(want, got.Manager.Image); diff != "" {
		t.Errorf("manager image (-want +got):\n%s", diff)
	}
	if got.Agent.Image["repository"] != "10.250.0.1:5000/mlkube/node-agent" || got.Agent.Image["digest"] != digest("b").String() {
		t.Errorf("agent image %v, want node-agent pinned by the second digest", got.Agent.Image)
	}
	wantArgs, err := managerArgs(pins(pushed))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantArgs, got.Manager.ExtraArgs); diff != "" {
		t.Errorf("manager extraArgs (-want +got):\n%s", diff)
	}

	if _, err := chartValues("v1.2.3", pushed[1:]); err == nil || !strings.Contains(err.Error(), images.Manager.Ref) {
		t.Errorf("without the manager: %v, want an error naming it", err)
	}
	if _, err := chartValues("v9.9.9", pushed); err == nil {
		t.Error("images tagged with another release were accepted")
	}
}
