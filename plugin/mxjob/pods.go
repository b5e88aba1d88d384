package mxjob

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// replicaFilter picks replicas by type (lowercase, as the pod label has it; "" for all) and
// index (-1 for all).
type replicaFilter struct {
	typ   string
	index int
}

// listReplicaPods lists a job's replica pods, schedulers first, then by index.
func listReplicaPods(ctx context.Context, c client.Client, ns, job string, f replicaFilter) ([]corev1.Pod, error) {
	sel := client.MatchingLabels{v1beta1.LabelJobName: job}
	if f.typ != "" {
		sel[v1beta1.LabelReplicaType] = f.typ
	}
	if f.index >= 0 {
		sel[v1beta1.LabelReplicaIndex] = strconv.Itoa(f.index)
	}
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), sel); err != nil {
		return nil, err
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return byReplica(&a, &b) })
	return pods.Items, nil
}

// byReplica orders a job's pods (or their metrics) by replica type, as the controller starts
// them, then by index.
func byReplica(a, b metav1.Object) int {
	if d := typeOrder(a.GetLabels()[v1beta1.LabelReplicaType]) - typeOrder(b.GetLabels()[v1beta1.LabelReplicaType]); d != 0 {
		return d
	}
	ai, _ := strconv.Atoi(a.GetLabels()[v1beta1.LabelReplicaIndex])
	bi, _ := strconv.Atoi(b.GetLabels()[v1beta1.LabelReplicaIndex])
	if ai != bi {
		return ai - bi
	}
	return strings.Compare(a.GetName(), b.GetName())
}

// typeOrder orders replica types as the controller starts them.
func typeOrder(role string) int {
	for i, t := range v1beta1.ReplicaTypes {
		if strings.EqualFold(string(t), role) {
			return i
		}
	}
	return len(v1beta1.ReplicaTypes)
}

// replicaTypeNames are the values of --type, as the pod label spells them.
func replicaTypeNames() []string {
	var out []string
	for _, t := range v1beta1.ReplicaTypes {
		out = append(out, t.Role())
	}
	return out
}

// parseReplicaType accepts a replica type in any case: worker, WORKER.
func parseReplicaType(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	l := strings.ToLower(s)
	if !slices.Contains(replicaTypeNames(), l) {
		return "", fmt.Errorf("--type %q is not a replica type; use %s", s, strings.Join(replicaTypeNames(), ", "))
	}
	return l, nil
}

// replicaOf names a pod's replica as users read it: worker-1.
func replicaOf(p *corev1.Pod) string {
	return p.Labels[v1beta1.LabelReplicaType] + "-" + p.Labels[v1beta1.LabelReplicaIndex]
}
