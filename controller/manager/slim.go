package manager

import (
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// The manager watches pods and Services by the managed-by label, which anyone who may create a
// pod can set. So what it caches of each is bounded by the transforms below, not by the object:
// a pod forged with the label and a 1 MiB annotation, 100 KiB of env or a thousand owner
// references costs the cache a few hundred bytes, and one with no mlkube controller is kept as
// a bare name that no reconcile ever sees (its event maps to no owner). The label selector stays
// on the watch: it keeps the cluster's other pods off the wire, which the transforms cannot.
//
// Of the choices, keeping the selector and slimming every object is the one that bounds memory:
// ignoring objects whose controller is not an mlkube kind alone would still store them whole
// (an informer keeps what it is sent), and a tenant may make its own MxJob the controller of a
// forged pod anyway; what such a pod costs is bounded here just the same.
//
// The cache is read only by the reconcilers, which never write a cached pod or Service back (they
// create from their own builds and delete by UID), so a slim copy loses nothing. What the
// reconcilers read is kept: mxjob phase, container statuses (exit code, restarts, finish time),
// start time; transform the node annotation, podIP, ready condition, the first container's ports,
// termination reason and message; both names, labels, the controller reference, creation and
// deletion timestamps. Adding a read of another field means keeping it here.
const (
	// maxContainers bounds the containers and container statuses kept: an MXNet or transformer
	// pod has one container and perhaps a few sidecars.
	maxContainers = 16
	// maxPorts bounds the first container's ports kept (the transformer port is looked up by name).
	maxPorts = 16
	// maxMessage bounds the status text kept of a pod (its reason and message, and every
	// container's termination reason and message, together): the kubelet already caps
	// termination messages at 12 KiB a pod, and a Transform's status needs only the gist.
	maxMessage = 1024
	// maxName bounds a name kept from a field the API server does not validate as a name (an
	// owner reference's, the node annotation): longer ones cannot name a real object.
	maxName = 253
	// maxUID bounds an owner reference's UID (a UUID is 36 characters).
	maxUID = 64
)

// keptLabels are the labels the controllers select their pods and Services by; a label value is
// at most 63 characters, so they cost a bounded amount.
var keptLabels = []string{
	labels.ManagedBy, labels.Name, labels.Component,
	v1beta1.LabelJobName, v1beta1.LabelReplicaType, v1beta1.LabelReplicaIndex,
	v1alpha1.LabelName,
}

// owners are the kinds whose controllers own pods and Services.
var owners = []schema.GroupVersionKind{
	v1beta1.GroupVersion.WithKind("MxJob"),
	v1alpha1.GroupVersion.WithKind("Transform"),
}

// maxTokenKey bounds the token key annotation kept: status.nodes[].tokenKey's maxLength.
const maxTokenKey = 16

// slimPod is the cache transform of pods: see the comment above.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone: nothing to slim
	}
	meta, owned := slimMeta(&pod.ObjectMeta)
	out := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: meta}
	if !owned {
		return out, nil
	}
	if node := pod.Annotations[v1alpha1.LabelNode]; node != "" && len(node) <= maxName {
		out.Annotations = map[string]string{v1alpha1.LabelNode: node}
	}
	// The key of the transformer's credential, which the status passes to the node agent; a key
	// ID is a few characters (k<N>).
	if key := pod.Annotations[v1alpha1.AnnotationTokenKey]; key != "" && len(key) <= maxTokenKey {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[v1alpha1.AnnotationTokenKey] = key
	}
	out.Spec.NodeName = pod.Spec.NodeName
	out.Spec.RestartPolicy = pod.Spec.RestartPolicy
	for i, c := range pod.Spec.Containers[:min(len(pod.Spec.Containers), maxContainers)] {
		kept := corev1.Container{Name: c.Name}
		if i == 0 {
			kept.Ports = c.Ports[:min(len(c.Ports), maxPorts):min(len(c.Ports), maxPorts)]
		}
		out.Spec.Containers = append(out.Spec.Containers, kept)
	}
	budget := maxMessage
	st := &pod.Status
	out.Status = corev1.PodStatus{
		Phase: st.Phase, PodIP: st.PodIP, StartTime: st.StartTime,
		Reason: clip(st.Reason, &budget), Message: clip(st.Message, &budget),
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady {
			out.Status.Conditions = []corev1.PodCondition{{Type: c.Type, Status: c.Status}}
			break
		}
	}
	for _, cs := range st.ContainerStatuses[:min(len(st.ContainerStatuses), maxContainers)] {
		kept := corev1.ContainerStatus{Name: cs.Name, Ready: cs.Ready, Started: cs.Started, RestartCount: cs.RestartCount}
		if t := cs.State.Terminated; t != nil {
			kept.State.Terminated = &corev1.ContainerStateTerminated{
				ExitCode: t.ExitCode, FinishedAt: t.FinishedAt,
				Reason: clip(t.Reason, &budget), Message: clip(t.Message, &budget),
			}
		}
		out.Status.ContainerStatuses = append(out.Status.ContainerStatuses, kept)
	}
	return out, nil
}

// slimService is the cache transform of Services: the MxJob controller reads only their names.
func slimService(obj any) (any, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return obj, nil
	}
	meta, _ := slimMeta(&svc.ObjectMeta)
	return &corev1.Service{TypeMeta: svc.TypeMeta, ObjectMeta: meta}, nil
}

// slimMeta keeps of m what the cache and the reconcilers need, and reports whether an mlkube
// object controls it. One that none controls keeps only its identity: no labels, so no
// reconcile's list finds it, and no owner reference, so its events enqueue nothing.
func slimMeta(m *metav1.ObjectMeta) (metav1.ObjectMeta, bool) {
	out := metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}
	ref := mlkubeController(m)
	if ref == nil {
		return out, false
	}
	out.OwnerReferences = []metav1.OwnerReference{*ref}
	for _, k := range keptLabels {
		if v, ok := m.Labels[k]; ok {
			if out.Labels == nil {
				out.Labels = map[string]string{}
			}
			out.Labels[k] = v
		}
	}
	return out, true
}

// mlkubeController is m's controller reference, trimmed to what owner matching reads, when it
// names one of the owners' kinds (at one of the API versions the controllers set, so every string
// of it is bounded); nil otherwise.
func mlkubeController(m *metav1.ObjectMeta) *metav1.OwnerReference {
	ref := metav1.GetControllerOfNoCopy(m)
	if ref == nil || len(ref.Name) > maxName || len(ref.UID) > maxUID {
		return nil
	}
	for _, gvk := range owners {
		if apiVersion, kind := gvk.ToAPIVersionAndKind(); ref.APIVersion == apiVersion && ref.Kind == kind {
			return &metav1.OwnerReference{
				APIVersion: apiVersion, Kind: kind, Name: ref.Name, UID: ref.UID,
				Controller: ref.Controller, BlockOwnerDeletion: ref.BlockOwnerDeletion,
			}
		}
	}
	return nil
}

// clip returns s cut, at a character's start, to what is left of budget, and takes its length
// from budget.
func clip(s string, budget *int) string {
	n := min(len(s), *budget)
	for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	s = s[:n]
	*budget -= len(s)
	return s
}
