package transform

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/transform/podspec"
	"github.com/mlkube/mlkube/internal/transformertoken"
)

// The token Secrets are written blind, by server-side apply: the manager may create and patch
// Secrets in every namespace, and may not read any. Reading them would add nothing it needs and
// would let a manager bug or compromise leak every tenant's Secrets.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;patch

// tokenVolumeName is the transformer pod's volume of its token Secret.
const tokenVolumeName = "mlkube-transformer-token"

// fieldManager owns the fields the controller applies.
const fieldManager = "mlkube-manager"

// KeySource gives the current cluster key transformer credentials are derived with
// (controller/tokenkeys).
type KeySource interface {
	Current(ctx context.Context) (id string, key []byte, err error)
}

// tokenSecretName is the Secret holding t's token under keyID. The key ID is in the name, so that
// a running pod's token never changes under it when the key rotates: new pods mount a new Secret.
func tokenSecretName(t *v1alpha1.Transform, keyID string) string {
	return t.Name + "-mlkube-token-" + keyID
}

// applyTokenSecret writes t's token under keyID, whatever a Secret of that name held before: a
// tenant who created one first does not choose the token its transformer expects (force takes the
// token field over; other keys a tenant added stay, and the transformer reads none of them).
func applyTokenSecret(ctx context.Context, c client.Client, t *v1alpha1.Transform, keyID string, key []byte) error {
	token := transformertoken.Derive(keyID, key, t.Namespace, t.Name, t.UID)
	owner := podspec.ControlledBy(t)[0]
	secret := corev1ac.Secret(tokenSecretName(t, keyID), t.Namespace).
		WithLabels(podspec.Labels(t)).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(owner.APIVersion).WithKind(owner.Kind).WithName(owner.Name).WithUID(owner.UID).
			WithController(true).WithBlockOwnerDeletion(true)).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{wire.TransformerTokenKey: []byte(token)})
	if err := c.Apply(ctx, secret, client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying the token Secret %s/%s: %w", t.Namespace, tokenSecretName(t, keyID), err)
	}
	return nil
}

// mountToken gives the transformer container t's token under keyID: the Secret's volume,
// read-only at wire.TransformerTokenDir (mode 0444: the files belong to root, and a transformer
// running as any other user without an fsGroup could not read 0440; the pod is the Transform's
// alone, so no other user is in it to keep out), wire.EnvTokenFile naming the file, and the key ID in
// the pod's annotation, which the status passes to the node agent.
func mountToken(pod *corev1.Pod, t *v1alpha1.Transform, keyID string) {
	spec := &pod.Spec
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: tokenVolumeName, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: tokenSecretName(t, keyID), DefaultMode: ptr.To[int32](0o444)}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: tokenVolumeName, MountPath: wire.TransformerTokenDir, ReadOnly: true})
	c.Env = append(c.Env, corev1.EnvVar{Name: wire.EnvTokenFile, Value: wire.TransformerTokenDir + "/" + wire.TransformerTokenKey})
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[v1alpha1.AnnotationTokenKey] = keyID
}
