package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const bundleYAML = `# Generated
apiVersion: v1
kind: Namespace
metadata:
  name: mlkube-system
---
apiVersion: v1
kind: Service
metadata:
  name: mlkube-metrics
  namespace: mlkube-system
spec:
  ports:
  - port: 8443
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: node-agent
  namespace: mlkube-datapath
`

func TestCompare(t *testing.T) {
	for name, tc := range map[string]struct {
		chart string
		want  []string
	}{
		"Helm's labels and the release namespace aside, the same objects": {
			chart: `
apiVersion: v1
kind: Service
metadata:
  name: mlkube-metrics
  namespace: mlkube-system
  labels: {helm.sh/chart: mlkube-0.1.0, app.kubernetes.io/managed-by: Helm, app.kubernetes.io/instance: mlkube, app.kubernetes.io/version: v0.1.0}
  annotations: {helm.sh/resource-policy: keep}
spec:
  ports:
  - port: 8443
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: node-agent, namespace: mlkube-datapath}
`,
		},
		"a changed field, a missing and an extra object": {
			chart: `
apiVersion: v1
kind: Service
metadata: {name: mlkube-metrics, namespace: mlkube-system, labels: {app.kubernetes.io/name: mlkube}}
spec:
  ports:
  - port: 8444
---
apiVersion: v1
kind: ConfigMap
metadata: {name: extra, namespace: mlkube-system}
`,
			want: []string{
				"ConfigMap mlkube-system/extra: rendered by the chart, not in the bundle",
				"Service mlkube-system/mlkube-metrics differs",
				"ServiceAccount mlkube-datapath/node-agent: in the bundle, not rendered by the chart",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			chart, err := decodeObjects(strings.NewReader(tc.chart))
			if err != nil {
				t.Fatal(err)
			}
			bundle, err := decodeObjects(strings.NewReader(bundleYAML))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range compare(normalizeChart(chart), normalizeBundle(bundle, "mlkube-system")) {
				got = append(got, strings.SplitN(d, " (-bundle", 2)[0])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("differences (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNumbersStayExact: a large integer the chart's templates rounded through a float differs.
func TestNumbersStayExact(t *testing.T) {
	a, err := decodeObjects(strings.NewReader("kind: X\nmetadata: {name: a}\nmax: 9223372036854775807\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeObjects(strings.NewReader("kind: X\nmetadata: {name: a}\nmax: 9.223372036854776e+18\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diffs := compare(a, b); len(diffs) != 1 {
		t.Errorf("compare = %q, want one difference", diffs)
	}
}

func TestDuplicateObject(t *testing.T) {
	_, err := decodeObjects(strings.NewReader("kind: X\nmetadata: {name: a}\n---\nkind: X\nmetadata: {name: a}\n"))
	if err == nil || !strings.Contains(err.Error(), "X a appears twice") {
		t.Errorf("err = %v, want one naming the duplicate", err)
	}
}
