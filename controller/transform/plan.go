package transform

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/controller/internal/owned"
	"github.com/mlkube/mlkube/controller/transform/podspec"
)

// plan is what one reconcile does: the status to write, then the pods to create and delete.
type plan struct {
	status       v1alpha1.TransformStatus
	createOn     []string // nodes
	deletePods   []*corev1.Pod
	events       []owned.Event
	requeueAfter time.Duration
}

// computePlan decides one reconcile from the Transform, the cluster's nodes, its pods and the
// time: a pure function, where every lifecycle rule is decided, each policy by the file named for
// its spec field (stopped.go, failure_policy.go, init_timeout.go; nodeSelector and tolerations
// in eligible_nodes.go).
func computePlan(t *v1alpha1.Transform, nodes []corev1.Node, pods []corev1.Pod, reports map[string]wire.StatsReport, now time.Time) plan {
	p := plan{status: *t.Status.DeepCopy()}
	st := &p.status
	prevNodes := map[string]v1alpha1.NodeStatus{}
	for _, n := range st.Nodes {
		prevNodes[n.Node] = n
	}
	podOn := map[string]*corev1.Pod{}
	for i := range pods {
		podOn[pods[i].Annotations[v1alpha1.LabelNode]] = &pods[i]
	}
	switch {
	case t.Spec.Stopped:
		stop(t, pods, &p, now)
		return p
	case stillAborted(t):
		p.deleteEveryPod(pods)
		return p
	}
	st.ObservedGeneration = t.Generation
	eligible := eligibleNodes(t, nodes)

	// Nodes that left lose their pod. The pods are walked in their given order, not podOn's
	// random one: the same inputs make the same plan, deletions and events in the same order.
	for i := range pods {
		pod := &pods[i]
		if node := pod.Annotations[v1alpha1.LabelNode]; !slices.Contains(eligible, node) && pod.DeletionTimestamp == nil {
			p.deletePods = append(p.deletePods, pod)
			p.events = append(p.events, owned.Event{Reason: v1alpha1.ReasonNodeLeft, Message: fmt.Sprintf("node %s left; deleting transformer pod %s", node, pod.Name)})
		}
	}
	var failures []string
	var statuses []v1alpha1.NodeStatus
	ready := 0
	for _, node := range eligible {
		ns := v1alpha1.NodeStatus{Node: node, Counters: prevNodes[node].Counters, Restarts: prevNodes[node].Restarts}
		pod := podOn[node]
		if pod == nil {
			if _, known := prevNodes[node]; !known && st.Stage == v1alpha1.StageRunning {
				p.events = append(p.events, owned.Event{Reason: v1alpha1.ReasonNodeJoined, Message: fmt.Sprintf("node %s joined; starting a transformer there", node)})
			}
			p.createOn = append(p.createOn, node)
			statuses = append(statuses, ns)
			continue
		}
		ns.Pod, ns.IP, ns.Port = pod.Name, pod.Status.PodIP, podspec.ContainerPort(&pod.Spec.Containers[0])
		ns.TokenKey = pod.Annotations[v1alpha1.AnnotationTokenKey]
		ns.Ready = podReady(pod)
		if ns.Ready {
			ready++
		}
		if why := podFailure(pod, initTimeout(t), now); why != "" && pod.DeletionTimestamp == nil {
			msg := fmt.Sprintf("node %s: %s", node, why)
			failures = append(failures, msg)
			p.events = append(p.events, owned.Event{Warning: true, Reason: v1alpha1.ReasonTransformerFailed, Message: msg})
			if t.Spec.FailurePolicy == v1alpha1.FailureRestart {
				restartAfterBackoff(pod, &ns, &p, now)
			}
		} else if !ns.Ready && pod.DeletionTimestamp == nil {
			p.requeue(pod.CreationTimestamp.Add(initTimeout(t)).Sub(now))
		}
		statuses = append(statuses, ns)
	}
	st.Nodes = statuses
	st.NodesReady = fmt.Sprintf("%d/%d", ready, len(eligible))
	applyStats(st, wire.StatsKey(t.Namespace, t.Name), reports)

	switch {
	case len(failures) > 0 && t.Spec.FailurePolicy != v1alpha1.FailureRestart:
		abort(pods, &p, failures, now)
	case len(eligible) > 0 && ready == len(eligible):
		setStage(st, v1alpha1.StageRunning, v1alpha1.ReasonAllTransformersReady, fmt.Sprintf("transformers ready on %d nodes", ready), now)
	case len(eligible) == 0:
		setStage(st, v1alpha1.StageInitializing, v1alpha1.ReasonNoEligibleNodes, "no schedulable node matches spec.nodeSelector and spec.tolerations", now)
	default:
		setStage(st, v1alpha1.StageInitializing, v1alpha1.ReasonInitializing, fmt.Sprintf("transformers ready on %d of %d nodes", ready, len(eligible)), now)
	}
	return p
}

// deleteEveryPod plans the deletion of every pod not already going, once: pods already planned
// (their node left) are among them. With no pod left, no node has a transformer to report.
func (p *plan) deleteEveryPod(pods []corev1.Pod) {
	p.deletePods = nil
	for i := range pods {
		if pods[i].DeletionTimestamp == nil {
			p.deletePods = append(p.deletePods, &pods[i])
		}
	}
	p.status.Nodes, p.status.NodesReady = nil, ""
}

// requeue asks for a reconcile after the delay, unless one comes sooner already.
func (p *plan) requeue(after time.Duration) {
	p.requeueAfter = owned.Sooner(p.requeueAfter, after)
}
