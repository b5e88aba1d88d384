package integration

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// TestTransformerGetsItsCredential: the manager made the cluster key, the controller applied the
// Transform's token Secret (over one a tenant planted first), mounted it in the transformer pod
// and recorded the key in status.nodes[].tokenKey, from which the node agent derives the same
// token.
func TestTransformerGetsItsCredential(t *testing.T) {
	ctx := context.Background()
	createNode(t, "token-node")
	tr := builders.Transform("token").Runtime("mlkube/transformer-echo:dev").Spec(func(s *v1alpha1.TransformSpec) {
		s.NodeSelector = map[string]string{"etl-test": t.Name()}
	}).Obj()
	// The tenant plants a Secret under the name the controller will use, with a token it chose.
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: tr.Namespace, Name: tr.Name + "-mlkube-token-k1"},
		Data: map[string][]byte{wire.TransformerTokenKey: []byte("chosen-by-tenant")}}
	k8s.CreateTemporary(t, planted)
	k8s.MustCreate(t, tr)
	pods := k8s.WaitForPods(t, "the transformer pod", tr, 1)

	var keySecret corev1.Secret
	k8s.MustGet(t, client.ObjectKey{Namespace: opts.AgentNamespace, Name: transformertoken.SecretName}, &keySecret)
	keys, err := transformertoken.Parse(keySecret.Data)
	if err != nil {
		t.Fatalf("the manager's key Secret: %v", err)
	}
	keyID, key := keys.Current()
	if pods[0].Annotations[v1alpha1.AnnotationTokenKey] != keyID {
		t.Errorf("pod annotation %q, want the current key %s", pods[0].Annotations[v1alpha1.AnnotationTokenKey], keyID)
	}
	var token corev1.Secret
	k8s.MustGet(t, client.ObjectKey{Namespace: tr.Namespace, Name: tr.Name + "-mlkube-token-" + keyID}, &token)
	if want := transformertoken.Derive(keyID, key, tr.Namespace, tr.Name, tr.UID); string(token.Data[wire.TransformerTokenKey]) != want {
		t.Errorf("token Secret holds %q, want the derived token (the tenant's planted one must not survive)", token.Data[wire.TransformerTokenKey])
	}
	mounted := false
	for _, v := range pods[0].Spec.Volumes {
		mounted = mounted || (v.Secret != nil && v.Secret.SecretName == token.Name)
	}
	if !mounted {
		t.Errorf("the pod does not mount %s: %+v", token.Name, pods[0].Spec.Volumes)
	}

	markReady(t, ctx, &pods[0], "10.3.0.1")
	got := k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
	if len(got.Status.Nodes) != 1 || got.Status.Nodes[0].TokenKey != keyID {
		t.Errorf("status.nodes %+v, want tokenKey %s", got.Status.Nodes, keyID)
	}
	if err := k8s.Delete(ctx, tr); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}
