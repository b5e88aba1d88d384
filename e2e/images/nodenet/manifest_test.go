package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/mlkube/mlkube/internal/images"
)

// documents reads a manifest of the node image (hack/cluster/kindnode) and splits it into YAML documents.
func documents(t *testing.T, name string) ([]byte, [][]byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "cluster", "kindnode", name))
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
	return raw, docs
}

// strict decodes doc into obj, failing on any field obj's type does not have, so a misspelled
// field in the manifest fails here rather than being dropped by the API server.
func strict(t *testing.T, doc []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
}

// TestDefaultCNIManifest checks hack/cluster/kindnode/default-cni.yaml, which kind applies as the
// cluster's pod network, against what nodenet and kind need of it.
func TestDefaultCNIManifest(t *testing.T) {
	raw, docs := documents(t, "default-cni.yaml")
	if !strings.Contains(string(raw), "would you kindly patch this file") {
		t.Error("no kind patch marker: kind would not pass CONTROL_PLANE_ENDPOINT")
	}
	if strings.Contains(string(raw), "would you kindly template this file") {
		t.Error("template marker: kind would run the manifest through text/template")
	}

	var sa corev1.ServiceAccount
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	var ds appsv1.DaemonSet
	var kinds []string
	for _, doc := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, tm.Kind)
		switch tm.Kind {
		case "ServiceAccount":
			strict(t, doc, &sa)
		case "ClusterRole":
			strict(t, doc, &role)
		case "ClusterRoleBinding":
			strict(t, doc, &binding)
		case "DaemonSet":
			strict(t, doc, &ds)
		}
	}
	if want := []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}

	// Least privilege: read nodes, nothing else.
	if len(role.Rules) != 1 {
		t.Fatalf("ClusterRole rules %+v, want one", role.Rules)
	}
	rule := role.Rules[0]
	verbs := slices.Sorted(slices.Values(rule.Verbs))
	if !slices.Equal(rule.APIGroups, []string{""}) || !slices.Equal(rule.Resources, []string{"nodes"}) ||
		!slices.Equal(verbs, []string{"get", "list", "watch"}) || len(rule.ResourceNames) > 0 || len(rule.NonResourceURLs) > 0 {
		t.Errorf("ClusterRole rule %+v, want get, list and watch on core nodes only", rule)
	}
	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 ||
		binding.Subjects[0].Kind != "ServiceAccount" || binding.Subjects[0].Name != sa.Name || binding.Subjects[0].Namespace != sa.Namespace {
		t.Errorf("ClusterRoleBinding %+v does not bind ClusterRole %s to ServiceAccount %s/%s", binding, role.Name, sa.Namespace, sa.Name)
	}

	spec := ds.Spec.Template.Spec
	if ds.Name != "nodenet" || ds.Namespace != "kube-system" || spec.ServiceAccountName != sa.Name || sa.Namespace != ds.Namespace {
		t.Errorf("DaemonSet %s/%s runs as %q, want kube-system/nodenet as the ServiceAccount %s/%s", ds.Namespace, ds.Name, spec.ServiceAccountName, sa.Namespace, sa.Name)
	}
	if !spec.HostNetwork || spec.PriorityClassName != "system-node-critical" {
		t.Errorf("hostNetwork %v, priorityClassName %q; want true, system-node-critical", spec.HostNetwork, spec.PriorityClassName)
	}
	if !slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool {
		return t.Operator == corev1.TolerationOpExists && t.Key == "" && t.Effect == ""
	}) {
		t.Errorf("tolerations %+v, want one that tolerates every taint", spec.Tolerations)
	}
	if len(spec.Containers) == 0 {
		t.Fatal("no containers")
	}
	c := spec.Containers[0]
	if c.Image != images.KindNodeNet.Ref || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %q pulled %q, want %q (the image table's) pulled IfNotPresent", c.Image, c.ImagePullPolicy, images.KindNodeNet.Ref)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	}) {
		t.Errorf("env %+v, want NODE_NAME from spec.nodeName", c.Env)
	}
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Add, "NET_ADMIN") || (sc.Privileged != nil && *sc.Privileged) {
		t.Errorf("securityContext %+v, want NET_ADMIN and not privileged", sc)
	}
	cniDir := filepath.Dir(defaultConflist)
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == cniDir })
	if i < 0 {
		t.Fatalf("volume mounts %+v, want %s", c.VolumeMounts, cniDir)
	}
	j := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
	if j < 0 || spec.Volumes[j].HostPath == nil || spec.Volumes[j].HostPath.Path != cniDir || c.VolumeMounts[i].ReadOnly {
		t.Errorf("volumes %+v, want %s from the host, writable", spec.Volumes, cniDir)
	}
}

// TestKindPatchesDefaultCNI applies to the DaemonSet the JSON patch kind v0.33.0 applies
// (pkg/cluster/internal/create/actions/installcni), which fails unless the first container has
// an env list, and checks nodenet then gets the endpoint.
func TestKindPatchesDefaultCNI(t *testing.T) {
	_, docs := documents(t, "default-cni.yaml")
	patch, err := jsonpatch.DecodePatch([]byte(`[{"op": "add", "path": "/spec/template/spec/containers/0/env/-",
		"value": {"name": "CONTROL_PLANE_ENDPOINT", "value": "kind-control-plane:6443"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	patched := 0
	for _, doc := range docs {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		if tm.Kind != "DaemonSet" || tm.APIVersion != "apps/v1" {
			continue
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		out, err := patch.Apply(js)
		if err != nil {
			t.Fatalf("kind's patch fails: %v", err)
		}
		var ds appsv1.DaemonSet
		strict(t, out, &ds)
		env := ds.Spec.Template.Spec.Containers[0].Env
		if last := env[len(env)-1]; last.Name != "CONTROL_PLANE_ENDPOINT" || last.Value != "kind-control-plane:6443" {
			t.Errorf("env after kind's patch %+v", env)
		}
		patched++
	}
	if patched != 1 {
		t.Errorf("%d DaemonSets patched, want 1", patched)
	}
}

// TestDefaultStorageManifest: the node image's default StorageClass provisions nothing, so kind
// deploys no provisioner whose image would have to be pulled.
func TestDefaultStorageManifest(t *testing.T) {
	_, docs := documents(t, "default-storage.yaml")
	if len(docs) != 1 {
		t.Fatalf("%d documents, want one StorageClass", len(docs))
	}
	var sc storagev1.StorageClass
	strict(t, docs[0], &sc)
	if sc.Kind != "StorageClass" || sc.Name != "standard" || sc.Provisioner != "kubernetes.io/no-provisioner" ||
		sc.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Errorf("StorageClass %+v, want the default class standard with no provisioner", sc)
	}
}
