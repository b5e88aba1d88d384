package suite

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// spoofFinalizer is alice's own finalizer: it keeps her deleted Transform, which the controller
// no longer reconciles, so that the status she writes stays.
const spoofFinalizer = "alice.example/keep"

// Finding 6: the agent sent a Transform's objects to whatever address its status named. Alice,
// granted update and patch on transforms/status in A (editors lack it; the suite's Role gives
// it, as an admin might for a tool), points her ws Transform's transformer on a node at bob's md5
// transformer there, and keeps it so with a finalizer and a delete (a deleting Transform is not
// reconciled, so the controller does not write the status back). Her inline request is then an
// error, which is bob's transformer refusing the credential the agent derives for her Transform;
// bob's md5 never answers her. Her own transformer is the identity: an answer of her bytes is her
// own transformer, while the agent has not yet seen her status; an answer of their md5 would be
// bob's serving her. Without the fix (no credential, or the agent's ws connections pooled by
// address alone, so her objects ride the connections bob's requests opened) bob's transformer
// answers the md5, and the test fails (seen with the agent's ws pools keyed by address alone). B enforces the restricted Pod Security Standard, so bob
// has no fqn transformer to read his files through; the same credential guards it.
func (f *tenants) statusIPSpoof(t *testing.T) {
	ctx := context.Background()
	node := f.nodes[0]
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "transform-status-writer", Namespace: f.nsA},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{v1alpha1.GroupVersion.Group}, Resources: []string{"transforms/status"}, Verbs: []string{"update", "patch"},
		}},
	}
	k8s.MustCreate(t, role)
	k8s.MustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name + "-alice", Namespace: f.nsA},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	})

	tr := f.aTransform(t, "spoof", v1alpha1.CommWS, restrictedTransformer(echoImage))
	data := []byte("alice's object, to be sent to bob's transformer")
	putObjects(t, f.nsA, node, map[string][]byte{"spoof.txt": data})
	path := "/v1/transform/" + f.nsA + "/" + tr.Name + "/spoof.txt"
	if code, body := call(f.agents[node], http.MethodGet, path, f.tokenA, nil); code != http.StatusOK || body != string(data) {
		t.Fatalf("alice's request through her own echo transformer: %d %.300q, want 200 and her bytes", code, body)
	}

	var bobs v1alpha1.Transform
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(f.md5), &bobs); err != nil {
		t.Fatal(err)
	}
	var target *v1alpha1.NodeStatus
	for i := range bobs.Status.Nodes {
		if bobs.Status.Nodes[i].Node == node {
			target = &bobs.Status.Nodes[i]
		}
	}
	if target == nil || target.IP == "" {
		t.Fatalf("bob's md5 has no transformer address on %s: %+v", node, bobs.Status.Nodes)
	}

	// Kept: her finalizer, then her delete.
	cur := &v1alpha1.Transform{}
	if err := f.alice.Get(ctx, client.ObjectKeyFromObject(tr), cur); err != nil {
		t.Fatal(err)
	}
	old := cur.DeepCopy()
	cur.Finalizers = append(cur.Finalizers, spoofFinalizer)
	if err := f.alice.Patch(ctx, cur, client.MergeFrom(old)); err != nil {
		t.Fatalf("alice adding a finalizer to her Transform: %v", err)
	}
	t.Cleanup(func() { dropFinalizer(t, tr, spoofFinalizer) })
	if err := f.alice.Delete(ctx, cur); err != nil {
		t.Fatalf("alice deleting her Transform: %v", err)
	}

	// Her status names bob's transformer on node; the RoleBinding may take a moment to apply.
	deadline := time.Now().Add(pollTimeout)
	for {
		if err := f.alice.Get(ctx, client.ObjectKeyFromObject(tr), cur); err != nil {
			t.Fatal(err)
		}
		old := cur.DeepCopy()
		for i := range cur.Status.Nodes {
			if cur.Status.Nodes[i].Node == node {
				cur.Status.Nodes[i].IP, cur.Status.Nodes[i].Port = target.IP, target.Port
			}
		}
		err := f.alice.Status().Patch(ctx, cur, client.MergeFrom(old))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice writing her Transform's status with the role that allows it: %v", err)
		}
		time.Sleep(time.Second)
	}
	t.Logf("alice's Transform %s, deleting and kept, names bob's transformer %s:%d on %s", tr.Name, target.IP, target.Port, node)

	// Until the agent's cache has her status, her own transformer answers her bytes.
	deadline = time.Now().Add(pollTimeout)
	for {
		code, body := call(f.agents[node], http.MethodGet, path, f.tokenA, nil)
		switch {
		case code == http.StatusOK && body == md5hex(data):
			t.Fatalf("bob's md5 transformer served alice's request through her spoofed status: %s", body)
		case code == http.StatusOK && body == string(data) && time.Now().Before(deadline):
			time.Sleep(time.Second)
			continue
		case code < 400 || !strings.Contains(body, "credential"):
			t.Fatalf("alice's request with her status naming bob's transformer: %d %.400q, want an error saying bob's transformer refused the agent's credential for her Transform", code, body)
		}
		t.Logf("alice's request with her status naming bob's transformer: %d %.400s", code, body)
		break
	}
}

// dropFinalizer removes finalizer from tr, as an admin does, so that its delete completes.
func dropFinalizer(t *testing.T, tr *v1alpha1.Transform, finalizer string) {
	t.Helper()
	var cur v1alpha1.Transform
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(tr), &cur); err != nil {
		t.Logf("%s/%s: %v", tr.Namespace, tr.Name, err)
		return
	}
	old := cur.DeepCopy()
	kept := cur.Finalizers[:0]
	for _, f := range cur.Finalizers {
		if f != finalizer {
			kept = append(kept, f)
		}
	}
	cur.Finalizers = kept
	if err := k8s.Patch(context.Background(), &cur, client.MergeFrom(old)); err != nil {
		t.Errorf("removing finalizer %s of %s/%s: %v", finalizer, tr.Namespace, tr.Name, err)
	}
}
