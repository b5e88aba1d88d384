package suite

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// storeYAML is an ObjectStore as a user writes it: an endpoint and a bucket, the rest defaulted.
const storeYAML = `apiVersion: etl.mlkube.io/v1alpha1
kind: ObjectStore
metadata:
  name: raw
spec:
  endpoint: http://s3.storage.svc:7070
  bucket: team-raw
`

// TestEditorDeclaresAnObjectStore: erin, an editor of a namespace that enforces the restricted
// Pod Security Standard, declares an ObjectStore with kubectl apply. Through the webhook on the
// real cluster it is stored with every default (region, addressing, its keys in the Secret
// mlkube-object-stores) and a warning that the endpoint is plain http; one whose endpoint has a
// path and whose bucket S3 would refuse is refused naming both fields. frank, who may create
// ObjectStores in the namespace but not read its Secrets, is refused by the webhook naming the
// Secret the agents would sign with for him.
func TestEditorDeclaresAnObjectStore(t *testing.T) {
	admin := newShell(t)
	ns := onboard(t, "erin")
	erin := admin.as("erin")

	erin.file("store.yaml", storeYAML)
	code, stdout, stderr := erin.exec("apply", "-n", ns, "-f", "store.yaml")
	if code != 0 || !strings.Contains(stdout, "objectstore.etl.mlkube.io/raw created") || !strings.Contains(stderr, "is plain http") {
		t.Fatalf("kubectl apply -f store.yaml: exit %d\n--- stdout:\n%s--- stderr (want the plain-http warning):\n%s", code, stdout, stderr)
	}
	var got v1alpha1.ObjectStore
	if err := json.Unmarshal([]byte(erin.do(ns, "get objectstore raw -o json")), &got); err != nil {
		t.Fatal(err)
	}
	want := v1alpha1.ObjectStoreSpec{Endpoint: "http://s3.storage.svc:7070", Bucket: "team-raw", Region: "us-east-1", Addressing: v1alpha1.AddressingPath,
		Credentials: &v1alpha1.ObjectStoreCredentials{SecretName: "mlkube-object-stores", AccessKeyIDKey: "raw.accessKeyID", SecretAccessKeyKey: "raw.secretAccessKey"}}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("the stored ObjectStore (-want +got):\n%s", diff)
	}
	erin.do(ns, "get store", "raw", "http://s3.storage.svc:7070", "team-raw")

	erin.file("bad.yaml", strings.NewReplacer("name: raw", "name: bad", "svc:7070", "svc:7070/team-raw", "bucket: team-raw", "bucket: Team_Raw").Replace(storeYAML))
	erin.refused([]string{"apply", "-n", ns, "-f", "bad.yaml"}, "created", "spec.endpoint", "the bucket belongs in spec.bucket", "spec.bucket", "by S3's rules")

	k8s.MustCreate(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "objectstore-maker", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"objectstores"}, Verbs: []string{"create"}}}})
	k8s.MustCreate(t, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "frank-objectstore-maker", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "objectstore-maker"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "frank"}}})
	frank := admin.as("frank")
	frank.file("store.yaml", strings.Replace(storeYAML, "name: raw", "name: franks", 1))
	frank.refused([]string{"create", "-n", ns, "-f", "store.yaml"}, "created", "spec.credentials.secretName",
		"frank may not get secrets mlkube-object-stores in namespace "+ns)
}
