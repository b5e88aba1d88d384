package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/builders"
	"github.com/mlkube/mlkube/internal/restricted"
)

// TestMxJobWithADatasetWaitsForAgentsAndPlacesWorkersOnTheirNodes: in a namespace enforcing the
// restricted Pod Security Standard, a job with spec.dataset is refused while its workers'
// ServiceAccount may not read the dataset; once it may, the job has its scheduler and server created
// at once and its workers held back, with an event, while no node has a ready agent; once agents
// are ready on two nodes, the workers are created with the data path token and environment,
// limited to those two nodes, and the API server's Pod Security admission lets them in.
func TestMxJobWithADatasetWaitsForAgentsAndPlacesWorkersOnTheirNodes(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mxjob-dataset", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
	}}}
	k8s.MustCreate(t, ns)
	job := builders.MxJob("reader").Namespace(ns.Name).Dist(1, 2).
		Dataset(v1beta1.Dataset{Prefix: "train", Transform: "decode"}).Obj()
	for i := range job.Spec.ReplicaSpecs {
		spec := &job.Spec.ReplicaSpecs[i].Template.Spec
		spec.SecurityContext = restricted.Pod(1000)
		spec.Containers[0].SecurityContext = restricted.Container()
	}
	// The workers' ServiceAccount may not read the dataset yet: the job is refused, naming the
	// binding to make.
	err := k8s.Create(ctx, job.DeepCopy())
	if err == nil || !strings.Contains(err.Error(), "spec.dataset.transform: Forbidden: the workers run as ServiceAccount mxjob-dataset/default") ||
		!strings.Contains(err.Error(), "kubectl -n mxjob-dataset create rolebinding default-datapath --clusterrole=mlkube-datapath-user --serviceaccount=mxjob-dataset:default") {
		t.Fatalf("creating a job whose workers may not read its dataset: %v; want a refusal naming the binding", err)
	}
	grantDataset(t, ns.Name, "default")
	k8s.MustCreate(t, job)

	k8s.Eventually(t, "the scheduler and the server, and an event saying why the workers wait", func(ctx context.Context) (bool, error) {
		pods, err := k8s.Pods(ctx, job)
		if err != nil {
			return false, err
		}
		var events eventsv1.EventList
		if err := k8s.List(ctx, &events, client.InNamespace(ns.Name)); err != nil {
			return false, err
		}
		waiting := slices.ContainsFunc(events.Items, func(e eventsv1.Event) bool {
			return e.Regarding.Name == job.Name && e.Reason == v1beta1.ReasonNoDatapathAgent
		})
		return len(pods) == 2 && waiting, nil
	})
	pods, _ := k8s.Pods(ctx, job)
	for _, p := range pods {
		if p.Labels[v1beta1.LabelReplicaType] == "worker" {
			t.Fatalf("worker pod %s was created while no agent was ready", p.Name)
		}
		if slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == v1beta1.DatasetTokenVolume }) || p.Spec.Affinity != nil {
			t.Errorf("pod %s, which does not read the dataset, has volumes %v and affinity %v", p.Name, p.Spec.Volumes, p.Spec.Affinity)
		}
	}

	// An agent that is not Ready does not count: the workers go to node-a only.
	notReady := agentPod("node-b")
	k8s.CreateTemporary(t, notReady)
	setReady(t, ctx, startedAgent(t, "node-a"))
	checkWorkers(t, job, "node-a")

	// A job created once both agents are Ready spreads over both nodes.
	setReady(t, ctx, notReady)
	both := job.DeepCopy()
	both.ObjectMeta = metav1.ObjectMeta{Name: "reader2", Namespace: ns.Name}
	k8s.MustCreate(t, both)
	checkWorkers(t, both, "node-a", "node-b")
}

// grantDataset lets ServiceAccount sa of ns read the namespace's data through Transforms, as
// mlkube-datapath-user does (that ClusterRole is not installed here).
func grantDataset(t *testing.T, ns, sa string) {
	t.Helper()
	k8s.MustCreate(t, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "datapath", Namespace: ns}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"etl.mlkube.io"}, Resources: []string{"objects"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"etl.mlkube.io"}, Resources: []string{"transforms"}, Verbs: []string{"use"}},
	}})
	k8s.MustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "datapath", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "datapath"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}},
	})
}

// checkWorkers waits for the job's four pods and checks that its workers have the dataset's
// token and environment and may run on the given nodes only.
func checkWorkers(t *testing.T, job *v1beta1.MxJob, want ...string) {
	t.Helper()
	for _, p := range k8s.WaitForPods(t, "the scheduler, the server and both workers", job, 4) {
		if p.Labels[v1beta1.LabelReplicaType] != "worker" {
			continue
		}
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
		}
		if env[wire.EnvDatasetPrefix] != "train/" || env[wire.EnvDatasetTransform] != "decode" || env[wire.EnvNamespace] != job.Namespace ||
			env[wire.EnvDatapathURL] != wire.AgentServiceURL {
			t.Errorf("worker %s has env %v", p.Name, env)
		}
		if !slices.ContainsFunc(p.Spec.Volumes, func(v corev1.Volume) bool {
			return v.Projected != nil && v.Projected.Sources[0].ServiceAccountToken != nil && v.Projected.Sources[0].ServiceAccountToken.Audience == wire.Audience
		}) {
			t.Errorf("worker %s has no data path token volume: %v", p.Name, p.Spec.Volumes)
		}
		var nodes []string
		for _, term := range p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			nodes = append(nodes, term.MatchFields[0].Values...)
		}
		if !slices.Equal(nodes, want) {
			t.Errorf("worker %s may run on %v; want the nodes of the Ready agents, %v", p.Name, nodes, want)
		}
	}
}

// agentPod is an agent pod on node, in the agents' namespace.
func agentPod(node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-" + node, Namespace: opts.AgentNamespace, Labels: wire.AgentLabels()},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "agent", Image: "agent"}}},
	}
}

func startedAgent(t *testing.T, node string) *corev1.Pod {
	t.Helper()
	pod := agentPod(node)
	k8s.CreateTemporary(t, pod)
	return pod
}

// setReady plays the kubelet: the agent pod is Ready.
func setReady(t *testing.T, ctx context.Context, pod *corev1.Pod) {
	t.Helper()
	pod.Status = corev1.PodStatus{PodIP: "10.0.0.1", Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if err := k8s.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
}
