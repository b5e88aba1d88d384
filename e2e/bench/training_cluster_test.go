package bench

import (
	"fmt"
	"path"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/images"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// A pySet is a set of objects the in-pod benchmark reads, row py/<size> for MLKUBE_BENCH_ONLY.
type pySet struct{ size, count int }

func (s pySet) String() string { return "py/" + strconv.Itoa(s.size) }

// pySets are MLKUBE_BENCH_PY_SMALL objects of 4 KiB (4,000) and MLKUBE_BENCH_PY_LARGE of 1 MiB
// (256): each row reads a set in a second or more at the rates measured so far.
func pySets(t *testing.T) []pySet {
	return []pySet{{4 << 10, envInt(t, "MLKUBE_BENCH_PY_SMALL", 4000)}, {1 << 20, envInt(t, "MLKUBE_BENCH_PY_LARGE", 256)}}
}

// readInATrainingPod runs e2e/images/torch-trainer/bench.py in a pod on node: it puts each set's
// objects on node through the agent, then reads them with mlkube.torch's iterable dataset, with
// open() of the same files in a read-only hostPath of the node's data root and with a GET each
// from a bare file server of them, and through the namespace's md5 Transform against md5 in the
// DataLoader, every answer checked.
func readInATrainingPod(t *testing.T, k8s kubetest.Client, cs *kubernetes.Clientset, ns, node string, rounds int, sets []pySet) []pyResult {
	// The same transformer as the md5 examples; named as bench.py names it.
	md5 := builders.Transform("md5").Namespace(ns).Runtime(images.TransformerMD5.Ref).Obj()
	k8s.MustCreate(t, md5)
	k8s.WaitForStage(t, md5, v1alpha1.StageRunning)

	// The bare file server of the plain HTTP row: the same files, behind a node-local Service as
	// the agent is.
	dataDir := path.Join(podDataDir, ns)
	servePodWith(t, k8s, func(p *corev1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, fixture.NodeDataVolume("data", node))
		p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts,
			corev1.VolumeMount{Name: "data", MountPath: podDataDir, ReadOnly: true})
	}, ns, node, "pyfiles", "serve", "-dir", dataDir)
	bare := fmt.Sprintf("http://%s:%d/dir", nodeLocalService(t, k8s, ns, "pyfiles"), port)

	args := []string{"bench", dataDir, node, strconv.Itoa(rounds), bare}
	objects := 0
	for _, s := range sets {
		args = append(args, fmt.Sprintf("%d:%d", s.size, s.count))
		objects += s.count
	}
	ctr := loadgenContainer(args...)
	ctr.Name, ctr.Image = "bench", images.TorchTrainer.Ref
	ctr.Env = []corev1.EnvVar{{Name: wire.EnvNamespace, ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}
	ctr.VolumeMounts = []corev1.VolumeMount{
		{Name: "data", MountPath: podDataDir, ReadOnly: true},
		{Name: "token", MountPath: path.Dir(wire.TokenFile), ReadOnly: true},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "torch-bench", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{ctr},
			Volumes: []corev1.Volume{fixture.NodeDataVolume("data", node), fixture.TokenVolume("token")},
		},
	}
	// Ten rows a round over every object, with room for a slow node: at least a millisecond an
	// object and row.
	k8s.Timeout = 5*time.Minute + time.Duration(rounds*10*objects)*time.Millisecond
	results, err := parsePy(runToEnd(t, k8s, cs, pod))
	if err != nil {
		t.Fatal(err)
	}
	return results
}
