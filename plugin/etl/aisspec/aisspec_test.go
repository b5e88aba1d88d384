package aisspec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata")

// Corpus lists AIStore's published specs in testdata (README.md says where each comes from).
func corpus(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("testdata holds %d specs; the corpus is at least five", len(files))
	}
	return files
}

// TestCorpus: every published spec converts, with exactly the change report and the Transform of
// its .golden file.
func TestCorpus(t *testing.T) {
	for _, file := range corpus(t) {
		t.Run(file, func(t *testing.T) {
			doc, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			conv, err := Convert(doc, "", "ns")
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			js, err := yaml.Marshal(conv.Transform)
			if err != nil {
				t.Fatal(err)
			}
			got := "converted " + conv.From + ":\n  " + strings.Join(conv.Changes, "\n  ") + "\n---\n" + string(js)
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("conversion of %s (-%s +got):\n%s", file, golden, diff)
			}
		})
	}
}

func TestForm(t *testing.T) {
	for doc, want := range map[string]string{
		"name: x\nruntime: {image: i}\n":                             RuntimeSpec,
		"apiVersion: v1\nkind: Pod\n":                                PodSpec,
		"kind: Pod\n":                                                PodSpec,
		"apiVersion: etl.mlkube.io/v1alpha1\nkind: Transform\n":      "",
		"apiVersion: apps/v1\nkind: Deployment\nruntime: {image: i}": "",
		"name: x\n":  "",
		"- a\n- b\n": "",
	} {
		if got := Form([]byte(doc)); got != want {
			t.Errorf("Form(%q) = %q, want %q", doc, got, want)
		}
	}
}

// TestConvertRefuses: what has no mlkube equivalent, or cannot be read, is refused naming the
// field.
func TestConvertRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"no image": {"name: x\nruntime: {command: [a]}\n", "runtime.image is required: the transformer's image"},
		"no name":  {"runtime: {image: i}\n", "name is required: it names the Transform"},
		"a misspelt field": {"name: x\nruntime: {image: i}\nobj_timout: 1s\n",
			`reading the AIStore ETL runtime spec: error unmarshaling JSON: while decoding JSON: json: unknown field "obj_timout"`},
		"an unknown communication": {"name: x\nruntime: {image: i}\ncommunication: grpc://\n",
			`communication "grpc://" is not a communication type: want one of hpush://, hpull://, ws://, io://`},
		"an unknown argument": {"name: x\nruntime: {image: i}\nargument: path\n",
			`argument "path" is not an argument type: want "" (the bytes) or fqn (the object's path on the node)`},
		"a bad timeout": {"name: x\nruntime: {image: i}\ninit_timeout: soon\n",
			`init_timeout "soon" is not a duration: write one such as 45s or 5m`},
		"a timeout over mlkube's bound": {"name: x\nruntime: {image: i}\nobj_timeout: 2h\n",
			"obj_timeout 2h is over mlkube's limit of 1h0m0s for spec.objectTimeout; lower it"},
		"a template without a default": {"kind: Pod\nmetadata: {name: x, annotations: {communication_type: '${COMM}'}}\n",
			"metadata.annotations.communication_type is the unsubstituted template ${COMM}: substitute it first (COMM=hpush:// envsubst < pod.yaml) or remove it and pass --comm-type"},
		"a pod without a name": {"kind: Pod\nspec: {containers: [{name: a, image: b}]}\n",
			"metadata.name is required: it names the Transform"},
		"a misspelt pod field": {"kind: Pod\nmetadata: {name: x}\nspec: {containrs: []}\n",
			`reading the AIStore ETL pod spec: error unmarshaling JSON: while decoding JSON: json: unknown field "containrs"`},
		"not AIStore's": {"apiVersion: apps/v1\nkind: Deployment\n",
			"not an AIStore ETL spec: want a runtime spec (name, runtime.image, …) or a Pod (apiVersion v1, kind Pod)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Convert([]byte(tc.doc), "", "ns")
			if err == nil || err.Error() != tc.want {
				t.Errorf("Convert: %v\nwant: %s", err, tc.want)
			}
		})
	}
}

// TestConvertPodDrops: what AIStore's pod specs carry that a restricted transformer pod cannot
// have is dropped and reported; a given name wins over the spec's.
func TestConvertPodDrops(t *testing.T) {
	const doc = `apiVersion: v1
kind: Pod
metadata:
  name: echo-go
  namespace: data
  annotations: {communication_type: "ws://", keep: "yes"}
spec:
  affinity: {nodeAffinity: {}}
  securityContext: {runAsUser: 1000}
  containers:
  - name: server
    image: aistorage/transformer_echo_go:latest
    volumeMounts: [{name: ais, mountPath: /tmp/}, {name: scratch, mountPath: /scratch}]
  volumes:
  - {name: ais, hostPath: {path: /tmp/, type: Directory}}
  - {name: scratch, emptyDir: {}}
status: {phase: Running}
`
	conv, err := Convert([]byte(doc), "echo", "ns")
	if err != nil {
		t.Fatal(err)
	}
	wantChanges := []string{
		"apiVersion v1, kind Pod -> etl.mlkube.io/v1alpha1, kind Transform (metadata.labels, metadata.annotations and spec -> spec.podTemplate)",
		"metadata.name echo-go replaced by the name given, echo",
		"metadata.annotations.communication_type ws:// -> spec.communication ws",
		"spec.volumes[0] ais (hostPath /tmp/) dropped, with its volumeMounts: the restricted Pod Security Standard forbids hostPath; for objects by path use --arg-type fqn, which mounts the namespace's data of the node read-only at /var/lib/mlkube/data",
		"spec.affinity dropped: mlkube pins each transformer pod to its node, as AIStore pins it to its target's",
		"status dropped",
	}
	if diff := cmp.Diff(wantChanges, conv.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	tr := conv.Transform
	if tr.Name != "echo" || tr.Namespace != "data" {
		t.Errorf("name %s/%s, want data/echo (the pod's namespace, the name given)", tr.Namespace, tr.Name)
	}
	tmpl := tr.Spec.PodTemplate
	if got := tmpl.Annotations; len(got) != 1 || got["keep"] != "yes" {
		t.Errorf("template annotations %v, want only keep: AIStore's own are fields now", got)
	}
	if len(tmpl.Spec.Volumes) != 1 || tmpl.Spec.Volumes[0].Name != "scratch" ||
		len(tmpl.Spec.Containers[0].VolumeMounts) != 1 || tmpl.Spec.Containers[0].VolumeMounts[0].Name != "scratch" {
		t.Errorf("volumes %v, mounts %v: want the emptyDir kept and the hostPath gone", tmpl.Spec.Volumes, tmpl.Spec.Containers[0].VolumeMounts)
	}
	if tmpl.Spec.Affinity != nil {
		t.Errorf("affinity %v kept", tmpl.Spec.Affinity)
	}
}
