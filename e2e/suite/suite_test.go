package suite

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueuev1 "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/e2e/internal/fixture"
	"github.com/mlkube/mlkube/internal/kubetest"
)

const (
	systemNamespace = "mlkube-system"
	// dataPathNamespace holds the node agents.
	dataPathNamespace = "mlkube-datapath"
	managerName       = "mlkube-manager"
	// managerReplicas is how many manager pods the bundle runs.
	managerReplicas = 2
	// pollTimeout bounds every wait: long enough for a pod start on a loaded 2-core machine.
	pollTimeout = 3 * time.Minute
)

var (
	cfg       *rest.Config
	k8s       kubetest.Client
	clientset *kubernetes.Clientset
)

func TestMain(m *testing.M) {
	if err := applyScope(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kubeconfig := os.Getenv("MLKUBE_E2E_KUBECONFIG")
	if kubeconfig == "" {
		if os.Getenv("MLKUBE_REQUIRE_E2E") != "" {
			fmt.Fprintln(os.Stderr, "MLKUBE_E2E_KUBECONFIG is not set; run `make e2e`")
			os.Exit(1)
		}
		fmt.Println("skipping the e2e suite: MLKUBE_E2E_KUBECONFIG is not set (`make e2e` sets it); running the scope lists' own tests")
		flag.Parse()
		if err := flag.Set("test.run", unitTests); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(m.Run())
	}
	var err error
	if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
		fmt.Fprintf(os.Stderr, "loading %s: %v\n", kubeconfig, err)
		os.Exit(1)
	}
	// client-go's default of 5 requests a second would make the suite wait on itself.
	cfg.QPS, cfg.Burst = 100, 200
	fixture.LogAPIWarnings()
	s := scheme.New()
	utilruntime.Must(kueuev1.AddToScheme(s))
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s = kubetest.Client{Client: c, Interval: time.Second, Timeout: pollTimeout}
	clientset = kubernetes.NewForConfigOrDie(cfg)
	os.Exit(m.Run())
}

// podFailed says why a pod can never become ready: it failed, or a container cannot start.
func podFailed(p *corev1.Pod) error {
	if p.Status.Phase == corev1.PodFailed {
		return fmt.Errorf("pod %s failed: %s %s", p.Name, p.Status.Reason, p.Status.Message)
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && (w.Reason == "ErrImageNeverPull" || w.Reason == "CreateContainerConfigError" || w.Reason == "InvalidImageName") {
			return fmt.Errorf("pod %s cannot start container %s: %s: %s", p.Name, cs.Name, w.Reason, w.Message)
		}
	}
	return nil
}

// namespace creates a namespace for one test and removes it afterwards; on failure it first
// prints what a person needs to see: pods, events and the manager's logs. The namespace's default
// ServiceAccount, which the suite's client pods run as (clientOn), and mlkube-cli, which the
// plugins' data path commands act as, may use its Transforms and data on the node data path.
func namespace(t *testing.T) string {
	t.Helper()
	ns := bareNamespace(t)
	bindDataPath(t, ns, ns)
	bindCLI(t, ns)
	return ns
}

// bindDataPath lets the default ServiceAccount of namespace user, which the suite's client pods
// run as, run the Transforms of namespace ns and read and write its data, as a namespace admin
// grants a workload's identity (docs/datapath-rbac.md).
func bindDataPath(t *testing.T, ns, user string) {
	t.Helper()
	bindDataPathTo(t, ns, "datapath-"+user, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: user})
}

// cliServiceAccount is the data path identity of kubectl etl's commands, which they create on
// first use (docs/datapath-rbac.md).
const cliServiceAccount = "mlkube-cli"

// bindCLI binds mlkube-cli of ns to mlkube-datapath-user, as docs/install.md's onboarding has the
// admin do before the ServiceAccount exists.
func bindCLI(t *testing.T, ns string) {
	t.Helper()
	bindDataPathTo(t, ns, cliServiceAccount+"-datapath", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: cliServiceAccount, Namespace: ns})
}

func bindDataPathTo(t *testing.T, ns, name string, subject rbacv1.Subject) {
	t.Helper()
	k8s.MustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "mlkube-datapath-user"},
		Subjects:   []rbacv1.Subject{subject},
	})
}

// bareNamespace is namespace without any binding.
func bareNamespace(t *testing.T) string {
	t.Helper()
	return labelledNamespace(t, nil)
}

// labelledNamespace is bareNamespace with labels.
func labelledNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-", Labels: labels}}
	k8s.CreateTemporary(t, ns)
	// Registered after the delete, so it runs before it.
	t.Cleanup(func() {
		if t.Failed() {
			dumpDiagnostics(t, ns.Name)
			dumpDiagnostics(t, systemNamespace)
			dumpDiagnostics(t, dataPathNamespace)
		}
	})
	return ns.Name
}

func dumpDiagnostics(t *testing.T, ns string) {
	ctx := context.Background()
	var b strings.Builder
	fmt.Fprintf(&b, "==== diagnostics for namespace %s\n", ns)
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err == nil {
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "pod %s node=%s phase=%s reason=%s\n", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Reason)
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&b, "  container %s ready=%v restarts=%d state=%+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State)
			}
		}
	}
	var events corev1.EventList
	if err := k8s.List(ctx, &events, client.InNamespace(ns)); err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s/%s: %s %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	// Every container's logs, the transformers' too: a run that fails on one object says why
	// only in the transformer that served it.
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			logs, err := clientset.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{Container: c.Name, TailLines: ptr.To[int64](200)}).DoRaw(ctx)
			fmt.Fprintf(&b, "---- logs of %s/%s (err=%v)\n%s\n", p.Name, c.Name, err, logs)
		}
	}
	t.Log(b.String())
}

// scaleManager sets the manager's replicas and waits until that many are available.
func scaleManager(t *testing.T, replicas int32) {
	t.Helper()
	manager := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: systemNamespace, Name: managerName}}
	kubetest.Patch(t, k8s, manager, func(d *appsv1.Deployment) { d.Spec.Replicas = &replicas })
	kubetest.WaitFor(t, k8s, fmt.Sprintf("the manager to run %d ready replicas", replicas), manager, func(d *appsv1.Deployment) (bool, error) {
		pods, err := managerPods(context.Background())
		if err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas == replicas &&
			d.Status.UpdatedReplicas == replicas && int32(len(pods)) == replicas, nil
	})
}

// managerPods lists the manager's pods, old and new, whatever their state.
func managerPods(ctx context.Context) ([]corev1.Pod, error) {
	var pods corev1.PodList
	err := k8s.List(ctx, &pods, client.InNamespace(systemNamespace), client.MatchingLabels{"app.kubernetes.io/component": "manager"})
	return pods.Items, err
}
