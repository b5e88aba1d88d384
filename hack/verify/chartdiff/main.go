// Command chartdiff compares the objects the Helm chart renders with those of the kustomize
// bundle, object by object (by kind, namespace and name), and prints every difference; it exits 1
// when there is one. make chart-check runs it on `helm template` of manifests/chart/mlkube and
// manifests/install.yaml, so the two ways of installing mlkube cannot drift apart.
//
//	go run ./hack/verify/chartdiff -namespace mlkube-system chart.yaml manifests/install.yaml
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

func main() {
	ns := flag.String("namespace", "mlkube-system", "the release's namespace, which the chart was rendered into")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: chartdiff [-namespace NS] CHART.yaml BUNDLE.yaml")
		os.Exit(2)
	}
	chart, err := readObjects(flag.Arg(0))
	if err == nil {
		var bundle map[string]object
		if bundle, err = readObjects(flag.Arg(1)); err == nil {
			diffs := compare(normalizeChart(chart), normalizeBundle(bundle, *ns))
			for _, d := range diffs {
				fmt.Println(d)
			}
			if len(diffs) > 0 {
				fmt.Fprintf(os.Stderr, "chartdiff: %d objects differ between the chart and the bundle\n", len(diffs))
				os.Exit(1)
			}
			fmt.Printf("chartdiff: the chart renders the bundle's %d objects\n", len(bundle))
			return
		}
	}
	fmt.Fprintln(os.Stderr, "chartdiff:", err)
	os.Exit(2)
}

// object is one Kubernetes object as decoded YAML; numbers stay json.Number, so a value the
// chart's templates rounded (a large integer through a float) shows as a difference.
type object map[string]any

// key names an object as kubectl does: kind, namespace and name.
func (o object) key() string {
	meta, _ := o["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	kind, _ := o["kind"].(string)
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

// readObjects decodes every object of a multi-document YAML file, keyed by key.
func readObjects(path string) (map[string]object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeObjects(f)
}

func decodeObjects(r io.Reader) (map[string]object, error) {
	objs := map[string]object{}
	docs := yaml.NewYAMLReader(bufio.NewReader(r))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := sigsyaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // a document of comments only
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.UseNumber()
		var o object
		if err := dec.Decode(&o); err != nil {
			return nil, err
		}
		k := o.key()
		if _, dup := objs[k]; dup {
			return nil, fmt.Errorf("%s appears twice", k)
		}
		objs[k] = o
	}
}

// helmLabels and helmAnnotations are what the chart adds to each object's metadata and the
// bundle, applied by kubectl, cannot carry: which chart and release made it (Helm's and the
// Kubernetes recommended labels), and the CRDs' keep policy, which only Helm reads.
var (
	helmLabels      = []string{"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version"}
	helmAnnotations = []string{"helm.sh/resource-policy"}
)

// normalizeChart removes helmLabels and helmAnnotations from every object's metadata.
func normalizeChart(objs map[string]object) map[string]object {
	for _, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		dropKeys(meta, "labels", helmLabels)
		dropKeys(meta, "annotations", helmAnnotations)
	}
	return objs
}

// normalizeBundle removes the bundle's Namespace of the release: Helm keeps its release record in
// that namespace, so it must exist before the chart installs (helm install --create-namespace),
// and a chart cannot also own it.
func normalizeBundle(objs map[string]object, releaseNamespace string) map[string]object {
	delete(objs, "Namespace "+releaseNamespace)
	return objs
}

// dropKeys deletes keys from the map meta[field], and the map itself once empty.
func dropKeys(meta map[string]any, field string, keys []string) {
	m, _ := meta[field].(map[string]any)
	if m == nil {
		return
	}
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		delete(meta, field)
	}
}

// compare returns one message per object that only one side has or that differs, in key order.
func compare(chart, bundle map[string]object) []string {
	keys := map[string]bool{}
	for k := range chart {
		keys[k] = true
	}
	for k := range bundle {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var diffs []string
	for _, k := range sorted {
		c, inChart := chart[k]
		b, inBundle := bundle[k]
		switch {
		case !inChart:
			diffs = append(diffs, fmt.Sprintf("%s: in the bundle, not rendered by the chart", k))
		case !inBundle:
			diffs = append(diffs, fmt.Sprintf("%s: rendered by the chart, not in the bundle", k))
		default:
			if d := cmp.Diff(b, c); d != "" {
				diffs = append(diffs, fmt.Sprintf("%s differs (-bundle +chart):\n%s", k, d))
			}
		}
	}
	return diffs
}
