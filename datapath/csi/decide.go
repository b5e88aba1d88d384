package csi

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// The volume context keys the kubelet sets: pod information because the CSIDriver object has
// podInfoOnMount: true, and ephemeral for an inline volume of the pod spec.
const (
	kubeletPrefix = "csi.storage.k8s.io/"
	keyEphemeral  = kubeletPrefix + "ephemeral"
	keyNamespace  = kubeletPrefix + "pod.namespace"
	keyPodName    = kubeletPrefix + "pod.name"
	keyPodUID     = kubeletPrefix + "pod.uid"
)

// maxContextKeys bounds the volume context: the kubelet sets five keys (the pod's namespace, name,
// UID and ServiceAccount, ephemeral), and any other is the pod author's, which the driver refuses.
const maxContextKeys = 16

// maxUID bounds the pod UID the kubelet passes; the API server's UIDs are 36-character UUIDs.
const maxUID = 128

// maxPath is PATH_MAX: no target path the kubelet makes is longer.
const maxPath = 4096

// volume is what a NodePublishVolume request asks for, once its form is checked.
type volume struct {
	namespace, pod string
	uid            types.UID
	// target is where the kubelet wants the volume, a host path under <kubelet dir>/pods/<uid>/.
	target string
}

// refuse is a refusal the kubelet shows in the pod's FailedMount event.
func refuse(code codes.Code, format string, args ...any) error {
	return status.Errorf(code, wire.DataDriver+": "+format, args...)
}

// decide returns the volume to mount for req on node, or why not. pod and t are the pod the
// request names and the Transform that controls it, as the API server has them: nil when not
// found (the Transform is looked up by the name in the pod's controller reference, transformOf).
// Its refusals are InvalidArgument for a request no pod should make and PermissionDenied for a
// pod the driver does not serve, each naming the rule.
func decide(req *csi.NodePublishVolumeRequest, pod *corev1.Pod, t *v1alpha1.Transform, node, kubeletDir string) (volume, error) {
	v, err := parsePublish(req, kubeletDir)
	if err != nil {
		return volume{}, err
	}
	if err := checkPod(v, pod, node); err != nil {
		return volume{}, err
	}
	if err := checkTransform(pod, t, node); err != nil {
		return volume{}, err
	}
	return v, nil
}

// parsePublish checks the form of req: a read-only inline ephemeral volume, a context of the
// kubelet's keys alone naming a pod, and a target path under the pod's kubelet directory.
func parsePublish(req *csi.NodePublishVolumeRequest, kubeletDir string) (volume, error) {
	if req.GetVolumeId() == "" {
		return volume{}, refuse(codes.InvalidArgument, "the request has no volume ID")
	}
	ctx := req.GetVolumeContext()
	if len(ctx) > maxContextKeys {
		return volume{}, refuse(codes.InvalidArgument, "the volume context has %d keys, more than the %d the kubelet sets: the driver takes no volumeAttributes, remove them from the pod's csi volume", len(ctx), maxContextKeys)
	}
	if e := ctx[keyEphemeral]; e != "true" {
		return volume{}, refuse(codes.InvalidArgument, "only inline ephemeral volumes (a csi volume in the pod spec) are served, not PersistentVolumes: %s is %q", keyEphemeral, e)
	}
	if !req.GetReadonly() {
		return volume{}, refuse(codes.InvalidArgument, "the volume is read-only only: set readOnly: true on the pod's csi volume")
	}
	if extra := userKeys(ctx); len(extra) > 0 {
		return volume{}, refuse(codes.InvalidArgument, "the driver takes no volumeAttributes, only the kubelet's %s* keys: remove %s from the pod's csi volume", kubeletPrefix, strings.Join(extra, ", "))
	}
	v := volume{namespace: ctx[keyNamespace], pod: ctx[keyPodName], uid: types.UID(ctx[keyPodUID]), target: req.GetTargetPath()}
	for _, name := range []struct {
		key  string
		errs []string
	}{
		{keyNamespace, validation.IsDNS1123Label(v.namespace)},
		{keyPodName, validation.IsDNS1123Subdomain(v.pod)},
	} {
		if len(name.errs) > 0 {
			return volume{}, refuse(codes.InvalidArgument, "%s %.300q is not a Kubernetes name (%s): the CSIDriver %s needs podInfoOnMount: true", name.key, ctx[name.key], strings.Join(name.errs, "; "), wire.DataDriver)
		}
	}
	if v.uid == "" || len(v.uid) > maxUID || strings.ContainsAny(string(v.uid), "/\x00") || v.uid == "." || v.uid == ".." {
		return volume{}, refuse(codes.InvalidArgument, "%s %.200q is not a pod UID (at most %d characters, no slash): the CSIDriver %s needs podInfoOnMount: true", keyPodUID, v.uid, maxUID, wire.DataDriver)
	}
	if err := checkTarget(v.target, filepath.Join(kubeletDir, "pods", string(v.uid))); err != nil {
		return volume{}, err
	}
	return v, nil
}

// userKeys returns the context keys the kubelet does not set, sorted: the pod author's
// volumeAttributes.
func userKeys(ctx map[string]string) []string {
	var extra []string
	for k := range ctx {
		if !strings.HasPrefix(k, kubeletPrefix) {
			extra = append(extra, fmt.Sprintf("%.100q", k))
		}
	}
	slices.Sort(extra)
	return extra
}

// checkTarget refuses a target path that is not a clean absolute path strictly under dir: the
// driver mounts and removes only within the kubelet's pod directories (--kubelet-dir).
func checkTarget(target, dir string) error {
	if len(target) > maxPath || !filepath.IsAbs(target) || filepath.Clean(target) != target || !strings.HasPrefix(target, dir+"/") {
		return refuse(codes.InvalidArgument, "target path %.200q is not a clean absolute path under %s/: the kubelet's directory is --kubelet-dir", target, dir)
	}
	return nil
}

// checkPod refuses a pod that is not the one the kubelet named, or not on this node.
func checkPod(v volume, pod *corev1.Pod, node string) error {
	switch {
	case pod == nil:
		return refuse(codes.PermissionDenied, "pod %s/%s does not exist: only the transformer pods of fqn Transforms are served", v.namespace, v.pod)
	case pod.UID != v.uid:
		return refuse(codes.PermissionDenied, "pod %s/%s has UID %s, not %s as the kubelet named it: the pod was replaced", v.namespace, v.pod, pod.UID, v.uid)
	case pod.Spec.NodeName != node:
		return refuse(codes.PermissionDenied, "pod %s/%s runs on node %q, not on this node %q", v.namespace, v.pod, pod.Spec.NodeName, node)
	}
	return nil
}

// transformGroupKind is what the controller reference of a transformer pod names.
var transformGroupKind = v1alpha1.GroupVersion.WithKind("Transform").GroupKind()

// transformOf returns the controller reference of pod when it names a Transform, else nil.
func transformOf(pod *corev1.Pod) *metav1.OwnerReference {
	if pod == nil {
		return nil
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil || gv.WithKind(ref.Kind).GroupKind() != transformGroupKind {
		return nil
	}
	return ref
}

// checkTransform refuses pod unless t, the Transform its controller reference names, is that
// very Transform, reads its objects by fqn, and pod is its transformer pod on this node.
func checkTransform(pod *corev1.Pod, t *v1alpha1.Transform, node string) error {
	ref := transformOf(pod)
	switch {
	case ref == nil:
		return refuse(codes.PermissionDenied, "pod %s/%s is not controlled by a Transform (%s): only the transformer pods of fqn Transforms are served; write a Transform with spec.argument: fqn rather than naming the driver", pod.Namespace, pod.Name, transformGroupKind.Group)
	case t == nil:
		return refuse(codes.PermissionDenied, "Transform %s/%s, the controller of pod %s, does not exist", pod.Namespace, ref.Name, pod.Name)
	case t.UID != ref.UID:
		return refuse(codes.PermissionDenied, "Transform %s/%s has UID %s, not %s as pod %s's controller reference says: the pod belongs to a deleted Transform", t.Namespace, t.Name, t.UID, ref.UID, pod.Name)
	case t.Spec.Argument != v1alpha1.ArgFQN:
		return refuse(codes.PermissionDenied, "Transform %s/%s has spec.argument %q, not %q: only fqn transformers read the node's data", t.Namespace, t.Name, t.Spec.Argument, v1alpha1.ArgFQN)
	case pod.Name != v1alpha1.TransformerPodName(t.Name, node):
		return refuse(codes.PermissionDenied, "pod %s/%s is not Transform %s's transformer pod on node %s, which is named %s", pod.Namespace, pod.Name, t.Name, node, v1alpha1.TransformerPodName(t.Name, node))
	}
	return nil
}
