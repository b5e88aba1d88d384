package csi

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
)

// The fixture: an fqn Transform of namespace testNS and its transformer pod on testNode.
const (
	testNode      = "node-1"
	testNS        = "tenant-a"
	testTransform = "reader"
	testPodUID    = types.UID("0b7c5c4e-1b7e-4c1a-9a43-3b1f1b7c0d01")
	testTUID      = types.UID("5d6e7f80-2c3d-4e5f-8a9b-0c1d2e3f4a5b")
)

func testTransformObj() *v1alpha1.Transform {
	return &v1alpha1.Transform{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: testTransform, UID: testTUID},
		Spec:       v1alpha1.TransformSpec{Argument: v1alpha1.ArgFQN},
	}
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNS, Name: v1alpha1.TransformerPodName(testTransform, testNode), UID: testPodUID,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(testTransformObj(), v1alpha1.GroupVersion.WithKind("Transform"))},
		},
		Spec: corev1.PodSpec{NodeName: testNode},
	}
}

// targetOf is where the kubelet under kubeletDir mounts the csi volume "data" of the pod uid.
func targetOf(kubeletDir string, uid types.UID) string {
	return filepath.Join(kubeletDir, "pods", string(uid), "volumes", "kubernetes.io~csi", "data", "mount")
}

// publishRequest is what the kubelet under kubeletDir sends for pod's read-only inline volume.
func publishRequest(kubeletDir string, pod *corev1.Pod) *csi.NodePublishVolumeRequest {
	return &csi.NodePublishVolumeRequest{
		VolumeId:   "csi-0123456789abcdef",
		TargetPath: targetOf(kubeletDir, pod.UID),
		Readonly:   true,
		VolumeCapability: &csi.VolumeCapability{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY},
		},
		VolumeContext: map[string]string{
			keyEphemeral:                          "true",
			keyNamespace:                          pod.Namespace,
			keyPodName:                            pod.Name,
			keyPodUID:                             string(pod.UID),
			kubeletPrefix + "serviceAccount.name": "default",
		},
	}
}

// fakeAPI holds objs as the API server would.
func fakeAPI(objs ...client.Object) client.Reader {
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
}

// fakeMounter records mounts instead of making them.
type fakeMounter struct {
	mu sync.Mutex
	// mounts maps each mounted target to the directory its source named when it was mounted.
	mounts map[string]string
	binds  int
}

func newFakeMounter() *fakeMounter { return &fakeMounter{mounts: map[string]string{}} }

func (m *fakeMounter) BindReadOnly(source, target string) error {
	// source is /proc/self/fd/<n>: what it names is only known while the driver holds it open.
	dir, err := os.Readlink(source)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts[target] = dir
	m.binds++
	return nil
}

func (m *fakeMounter) Unmount(target string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mounts, target)
	return nil
}

func (m *fakeMounter) Mounted(target string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mounts[target]
	return ok, nil
}

// testOptions are the driver's options on a temporary kubelet directory and data root, its
// namespace directories owned by the test's user.
func testOptions(t *testing.T, m Mounter, objs ...client.Object) Options {
	t.Helper()
	return Options{
		Node:       testNode,
		KubeletDir: t.TempDir(),
		DataRoot:   t.TempDir(),
		UID:        os.Getuid(),
		GID:        os.Getgid(),
		Reader:     fakeAPI(objs...),
		Mounter:    m,
	}
}

// makeParent makes the target's parent, as the kubelet does before it calls the driver.
func makeParent(t *testing.T, target string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		t.Fatal(err)
	}
}
