package csi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// TestDecide: the driver mounts for the fqn transformer pod of a Transform on this node, read-only
// and inline, and refuses every other request with its code and a message naming the rule.
func TestDecide(t *testing.T) {
	const kubeletDir = "/var/lib/kubelet"
	otherRef := func(apiVersion, kind string, controller bool) func(*corev1.Pod, *v1alpha1.Transform, *csi.NodePublishVolumeRequest) {
		return func(p *corev1.Pod, _ *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) {
			p.OwnerReferences[0].APIVersion, p.OwnerReferences[0].Kind, p.OwnerReferences[0].Controller = apiVersion, kind, &controller
		}
	}
	for name, tc := range map[string]struct {
		change   func(*corev1.Pod, *v1alpha1.Transform, *csi.NodePublishVolumeRequest)
		noPod    bool
		noT      bool
		code     codes.Code
		contains string
	}{
		"the fqn transformer pod on this node": {code: codes.OK},
		"no volume ID": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) { r.VolumeId = "" },
			code:   codes.InvalidArgument, contains: "no volume ID",
		},
		"not read-only": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) { r.Readonly = false },
			code:   codes.InvalidArgument, contains: "set readOnly: true",
		},
		"a PersistentVolume, not ephemeral": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				delete(r.VolumeContext, keyEphemeral)
			},
			code: codes.InvalidArgument, contains: "only inline ephemeral volumes",
		},
		"ephemeral false": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.VolumeContext[keyEphemeral] = "false"
			},
			code: codes.InvalidArgument, contains: "only inline ephemeral volumes",
		},
		"a volume attribute of the pod's author": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.VolumeContext["namespace"] = "tenant-b"
			},
			code: codes.InvalidArgument, contains: `no volumeAttributes, only the kubelet's csi.storage.k8s.io/* keys: remove "namespace"`,
		},
		"too many context keys": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				for i := range maxContextKeys {
					r.VolumeContext[fmt.Sprintf("%sextra-%d", kubeletPrefix, i)] = "x"
				}
			},
			code: codes.InvalidArgument, contains: "more than the 16 the kubelet sets",
		},
		"no pod information": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				delete(r.VolumeContext, keyNamespace)
			},
			code: codes.InvalidArgument, contains: keyNamespace + ` "" is not a Kubernetes name`,
		},
		"a pod name over Kubernetes' limit": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.VolumeContext[keyPodName] = strings.Repeat("a", 254)
			},
			code: codes.InvalidArgument, contains: keyPodName,
		},
		"a pod UID with a slash": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.VolumeContext[keyPodUID] = "a/b"
				r.TargetPath = targetOf(kubeletDir, "a/b")
			},
			code: codes.InvalidArgument, contains: keyPodUID + ` "a/b" is not a pod UID`,
		},
		"a pod UID over the limit": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				uid := strings.Repeat("a", maxUID+1)
				r.VolumeContext[keyPodUID] = uid
				r.TargetPath = targetOf(kubeletDir, types.UID(uid))
			},
			code: codes.InvalidArgument, contains: "is not a pod UID (at most 128 characters",
		},
		"a target outside the kubelet's pods": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.TargetPath = "/etc/mount"
			},
			code: codes.InvalidArgument, contains: "target path",
		},
		"a target climbing out with ..": {
			change: func(p *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.TargetPath = kubeletDir + "/pods/" + string(p.UID) + "/../../../../etc"
			},
			code: codes.InvalidArgument, contains: "not a clean absolute path",
		},
		"a target in another pod's directory": {
			change: func(_ *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				r.TargetPath = targetOf(kubeletDir, "another-uid")
			},
			code: codes.InvalidArgument, contains: "target path",
		},
		"a pod that does not exist": {noPod: true, code: codes.PermissionDenied, contains: "does not exist"},
		"a pod whose UID differs": {
			change: func(p *corev1.Pod, _ *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) { p.UID = "replaced" },
			code:   codes.PermissionDenied, contains: "as the kubelet named it",
		},
		"a pod of another node": {
			change: func(p *corev1.Pod, _ *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) {
				p.Spec.NodeName = "node-2"
			},
			code: codes.PermissionDenied, contains: `runs on node "node-2"`,
		},
		"a pod without a controller": {
			change: func(p *corev1.Pod, _ *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) { p.OwnerReferences = nil },
			code:   codes.PermissionDenied, contains: "not controlled by a Transform",
		},
		"a pod owned, not controlled, by the Transform": {
			change: otherRef(v1alpha1.GroupVersion.String(), "Transform", false),
			code:   codes.PermissionDenied, contains: "not controlled by a Transform",
		},
		"a pod controlled by a ReplicaSet": {
			change: otherRef("apps/v1", "ReplicaSet", true),
			code:   codes.PermissionDenied, contains: "not controlled by a Transform",
		},
		"a pod controlled by a Transform of another group": {
			change: otherRef("etl.example.com/v1", "Transform", true),
			code:   codes.PermissionDenied, contains: "not controlled by a Transform",
		},
		"a Transform that does not exist": {noT: true, code: codes.PermissionDenied, contains: "Transform tenant-a/reader, the controller of pod"},
		"a Transform recreated under the same name": {
			change: func(_ *corev1.Pod, tr *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) { tr.UID = "new" },
			code:   codes.PermissionDenied, contains: "belongs to a deleted Transform",
		},
		"a Transform that is not fqn": {
			change: func(_ *corev1.Pod, tr *v1alpha1.Transform, _ *csi.NodePublishVolumeRequest) { tr.Spec.Argument = "" },
			code:   codes.PermissionDenied, contains: `spec.argument "", not "fqn"`,
		},
		"a pod named for another node": {
			change: func(p *corev1.Pod, _ *v1alpha1.Transform, r *csi.NodePublishVolumeRequest) {
				p.Name = v1alpha1.TransformerPodName(testTransform, "node-2")
				r.VolumeContext[keyPodName] = p.Name
			},
			code: codes.PermissionDenied, contains: "is not Transform reader's transformer pod on node node-1",
		},
	} {
		t.Run(name, func(t *testing.T) {
			pod, tr := testPod(), testTransformObj()
			req := publishRequest(kubeletDir, pod)
			if tc.change != nil {
				tc.change(pod, tr, req)
			}
			if tc.noPod {
				pod = nil
			}
			if tc.noT {
				tr = nil
			}
			v, err := decide(req, pod, tr, testNode, kubeletDir)
			if got := status.Code(err); got != tc.code || !strings.Contains(status.Convert(err).Message(), tc.contains) {
				t.Fatalf("decide: %v (%v), want %v containing %q", err, got, tc.code, tc.contains)
			}
			want := volume{namespace: testNS, pod: testPod().Name, uid: testPodUID, target: req.TargetPath}
			if err == nil && v != want {
				t.Errorf("volume %+v, want %+v", v, want)
			}
			if err != nil && !strings.HasPrefix(status.Convert(err).Message(), "data.mlkube.io: ") {
				t.Errorf("message %q does not name the driver", status.Convert(err).Message())
			}
		})
	}
}

// TestTransformOfNeedsTheController: only the controller reference names the Transform to check;
// a pod merely owned by a Transform is not its transformer.
func TestTransformOfNeedsTheController(t *testing.T) {
	p := testPod()
	p.OwnerReferences = append([]metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "Transform", Name: "other", UID: "x"}}, p.OwnerReferences...)
	if ref := transformOf(p); ref == nil || ref.Name != testTransform {
		t.Errorf("transformOf: %+v, want the controller %s", ref, testTransform)
	}
}
