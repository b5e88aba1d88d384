package suite

import (
	"context"
	"errors"
	"path"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"

	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/kubetest"
)

const (
	clientImage = "mlkube/e2e-testserver:dev"
	// podDataDir is where a client pod mounts its node's data root.
	podDataDir = "/data"
)

// clientOn starts a client pod on node and returns its name once it is ready. The pod also
// mounts the node's data root, so the suite writes and reads the node's objects through it (the
// testserver's /files): that works on every provider, kind's container nodes included. What the
// test wrote into namespace ns's data is removed when it ends. The pod calls the node agent with
// a data path token of ns's default ServiceAccount (see fetchFrom).
func clientOn(t *testing.T, ns, node string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "client-" + node, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: "client", Image: clientImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Env: []corev1.EnvVar{
					{Name: "DATA_DIR", Value: podDataDir},
					{Name: "TOKEN_FILE", Value: wire.TokenFile},
					{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				},
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("http")}}, PeriodSeconds: 1},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "data", MountPath: podDataDir},
					{Name: "token", MountPath: path.Dir(wire.TokenFile), ReadOnly: true},
				},
			}},
			Volumes: []corev1.Volume{
				fixture.NodeDataVolume("data", node),
				fixture.TokenVolume("token"),
			},
		},
	}
	startPod(t, pod)
	t.Cleanup(func() {
		if code, body := nodeFiles(ns, pod.Name, "DELETE", ""); code != 204 {
			t.Logf("removing namespace %s's data from node %s: %d %s", ns, node, code, body)
		}
	})
	return pod.Name
}

// startPod creates pod and returns it once it is ready, with its IP.
func startPod(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	k8s.MustCreate(t, pod)
	return kubetest.WaitFor(t, k8s, "pod "+pod.Namespace+"/"+pod.Name+" on "+pod.Spec.NodeName+" ready", pod, func(p *corev1.Pod) (bool, error) {
		if err := podFailed(p); err != nil {
			return false, kubetest.Stop(err)
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// nodeFiles calls the client pod's /files through the API server's pod proxy and returns the
// status and body. name is a file of namespace ns's data (its directory of the node's data root),
// as the node agent names objects. The suite only reads and cleans up this way: it puts objects
// through the object API, as users do.
func nodeFiles(ns, pod, method, name string) (int, string) {
	return proxyResult(clientset.CoreV1().RESTClient().Verb(method).Namespace(ns).Resource("pods").Name(pod+":8080").
		SubResource("proxy").Suffix("files", path.Join(ns, name)).Do(context.Background()))
}

// proxyResult is the status and body of a pod proxy call; a failure to reach the pod at all
// comes back as status 0 and the error.
func proxyResult(res rest.Result) (int, string) {
	var code int
	res.StatusCode(&code)
	raw, err := res.Raw()
	var status apierrors.APIStatus
	if code == 0 && errors.As(err, &status) {
		// client-go drops the status and body of an error answer whose content type it cannot
		// decode (the pod's plain-text and JSON error bodies); the StatusError it returns keeps
		// the code, and the body as its cause.
		st := status.Status()
		msg := st.Message
		if st.Details != nil && len(st.Details.Causes) > 0 {
			msg = st.Details.Causes[0].Message
		}
		return int(st.Code), msg
	}
	if err != nil && code == 0 {
		return 0, err.Error()
	}
	return code, string(raw)
}
