package cluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mlkube/mlkube/internal/images"
)

// TestS3ServerManifest: s3-server.yaml runs the image e2e/images builds, where S3Endpoint says,
// in a namespace that enforces the restricted Pod Security Standard (the API server then refuses
// any pod of it that does not meet it), with the keys of S3KeysSecret.
func TestS3ServerManifest(t *testing.T) {
	objs, err := manifestObjects("s3-server.yaml", s3ServerManifest)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var ns corev1.Namespace
	var svc corev1.Service
	var deploy appsv1.Deployment
	for _, u := range objs {
		kinds = append(kinds, u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName())
		into := map[string]any{"Namespace": &ns, "Service": &svc, "Deployment": &deploy}[u.GetKind()]
		if into == nil {
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
			t.Fatalf("%s: %v", u.GetKind(), err)
		}
	}
	// The Namespace comes first: InstallS3Server creates the keys between it and the rest.
	want := []string{"Namespace /" + S3Namespace, "Service " + S3Namespace + "/" + S3Service, "Deployment " + S3Namespace + "/s3"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("namespace labels %v; want the restricted standard enforced", ns.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != S3Port {
		t.Errorf("service ports %+v; want %d", svc.Spec.Ports, S3Port)
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	if c.Image != images.S3Server.Ref {
		t.Errorf("image %s; want %s", c.Image, images.S3Server.Ref)
	}
	var keys []string
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			keys = append(keys, e.Name+"="+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
		}
	}
	wantKeys := []string{"ROOT_ACCESS_KEY_ID=" + S3KeysSecret + "/accessKeyID", "ROOT_SECRET_ACCESS_KEY=" + S3KeysSecret + "/secretAccessKey"}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}
