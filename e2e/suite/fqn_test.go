package suite

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/kubetest"
)

// warnings keeps the API server's Warning headers a client got.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// impersonateWarned is impersonate, with the warnings the API server answers the user with.
func impersonateWarned(t *testing.T, user string) (kubetest.Client, *warnings) {
	t.Helper()
	w := &warnings{}
	c := rest.CopyConfig(cfg)
	c.WarningHandler = w
	return kubetest.Client{Client: kubetest.Impersonate(t, c, scheme.New(), user), Interval: time.Second, Timeout: pollTimeout}, w
}

// TestFQNInRestrictedNamespace (issue 24, deliver 2): in a namespace that enforces the restricted
// Pod Security Standard, an editor's fqn Transforms of every communication run, with no warning,
// and read each node's own objects through the data.mlkube.io volume; a TransformRun through one
// of them writes every result on its node. Before the CSI driver an fqn pod carried a hostPath,
// which the API server refuses there: the Transforms never became Running.
func TestFQNInRestrictedNamespace(t *testing.T) {
	nodes := readyNodes(t)
	ns := onboard(t, "frank")
	frank, warned := impersonateWarned(t, "frank")
	token := dataPathToken(t, ns, cliServiceAccount)
	agents := map[string]string{}
	objects := map[string][]byte{} // node → its object in/<node>.bin
	rng := rand.New(rand.NewPCG(24, 7))
	for _, node := range nodes {
		agents[node] = forwardToAgent(t, node)
		objects[node] = randomBytes(rng, 1+rng.IntN(256<<10))
		putObjects(t, ns, node, map[string][]byte{"in/" + node + ".bin": objects[node]})
	}
	for _, comm := range v1alpha1.Communications {
		t.Run(string(comm), func(t *testing.T) {
			tr := nodeMD5Transform(ns, comm)
			tr.Name, tr.Spec.Argument = "fqn-"+string(comm), v1alpha1.ArgFQN
			frank.MustCreate(t, tr)
			k8s.WaitForStage(t, tr, v1alpha1.StageRunning)
			pods, err := k8s.Pods(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pods {
				checkDataVolume(t, &p)
			}
			for _, node := range nodes {
				code, body := call(agents[node], http.MethodGet, "/v1/transform/"+ns+"/"+tr.Name+"/in/"+node+".bin", token, nil)
				if want := node + ":" + md5hex(objects[node]); code != http.StatusOK || body != want {
					t.Errorf("%s on %s: %d %.300q, want 200 %s", tr.Name, node, code, body, want)
				}
			}
		})
	}
	run := &v1alpha1.TransformRun{
		ObjectMeta: metav1.ObjectMeta{Name: "fqn-run", Namespace: ns},
		Spec: v1alpha1.TransformRunSpec{
			Transform:   "fqn-" + string(v1alpha1.CommHPush),
			Source:      v1alpha1.RunSource{Prefix: "in"},
			Destination: v1alpha1.RunDestination{Prefix: "out"},
		},
	}
	frank.MustCreate(t, run)
	waitRun(t, run, v1alpha1.RunSucceeded)
	for _, node := range nodes {
		code, body := call(agents[node], http.MethodGet, objectPath(ns, "out/"+node+".bin"), token, nil)
		if want := node + ":" + md5hex(objects[node]); code != http.StatusOK || body != want {
			t.Errorf("the run's result on %s: %d %.300q, want 200 %s", node, code, body, want)
		}
	}
	if w := warned.all(); len(w) > 0 {
		t.Errorf("the API server warned frank: %q", w)
	}
}

// checkDataVolume: an fqn transformer pod's data root is the data.mlkube.io volume, read-only, and
// the pod has no hostPath.
func checkDataVolume(t *testing.T, p *corev1.Pod) {
	t.Helper()
	found := false
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("pod %s has the hostPath volume %s", p.Name, v.Name)
		}
		if v.CSI != nil && v.CSI.Driver == wire.DataDriver && ptr.Deref(v.CSI.ReadOnly, false) {
			found = true
		}
	}
	if !found {
		t.Errorf("pod %s has no read-only %s volume: %+v", p.Name, wire.DataDriver, p.Spec.Volumes)
	}
}

// TestDataCSIRefusesOtherPods: a pod an editor writes that names the data.mlkube.io driver is
// refused by the driver (a FailedMount event with its reason) and never starts: the driver mounts
// only for the transformer pods the manager made for fqn Transforms. Pod Security lets the pod
// in (restricted allows csi volumes), so the driver's check is what stands in its way.
func TestDataCSIRefusesOtherPods(t *testing.T) {
	ns := onboard(t, "gina")
	gina := impersonate(t, "gina")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "thief", Namespace: ns},
		Spec: corev1.PodSpec{
			SecurityContext: restrictedTransformer(clientImage).Spec.SecurityContext,
			Containers: []corev1.Container{{
				Name: "thief", Image: clientImage, ImagePullPolicy: corev1.PullIfNotPresent,
				SecurityContext: restrictedTransformer(clientImage).Spec.Containers[0].SecurityContext,
				VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/data", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				CSI: &corev1.CSIVolumeSource{Driver: wire.DataDriver, ReadOnly: ptr.To(true)}}}},
		},
	}
	gina.MustCreate(t, pod)
	var refusal string
	k8s.Eventually(t, "the driver's FailedMount event for pod "+pod.Name, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			// The driver's own refusal, not the kubelet's "not found in the list of registered CSI
			// drivers", which a missing driver would give.
			if e.InvolvedObject.Name == pod.Name && e.Reason == "FailedMount" && strings.Contains(e.Message, "code = PermissionDenied") {
				refusal = e.Message
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("the driver refused: %s", refusal)
	var got corev1.Pod
	k8s.MustGet(t, client.ObjectKeyFromObject(pod), &got)
	for _, s := range got.Status.ContainerStatuses {
		if s.State.Running != nil || s.State.Terminated != nil {
			t.Errorf("pod %s's container started although its volume was refused: %+v", pod.Name, s.State)
		}
	}
	if got.Status.Phase != corev1.PodPending {
		t.Errorf("pod %s is %s, want Pending", pod.Name, got.Status.Phase)
	}
}
