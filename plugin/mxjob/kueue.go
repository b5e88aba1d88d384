package mxjob

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/mlkube/mlkube/api/labels"
	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
)

// What the plugin knows of Kueue (docs/kueue.md): the labels that queue a job, and its Admitted
// condition, which says why a queued job does not run.

// Where to find the names Kueue's labels take, for the messages refusing one.
const (
	localQueueHint    = "name a LocalQueue of the namespace (kubectl get localqueues)"
	priorityClassHint = "name a WorkloadPriorityClass (kubectl get workloadpriorityclasses)"
)

// stateQueued is the state list, describe and wait show for a job Kueue holds back. It is no
// status.state: the controller only sees a suspended job, which would hide that it waits for
// Kueue rather than for someone to resume it.
const stateQueued = "Queued"

// kueueFlags are submit's flags that queue the job in Kueue.
type kueueFlags struct {
	queue, priorityClass string
}

// kueueLabels are the labels of --queue and --priority-class, nil without them. Errors name the
// flag.
func kueueLabels(f kueueFlags) (map[string]string, error) {
	if f.queue == "" {
		if f.priorityClass != "" {
			return nil, errors.New("--priority-class applies to a job queued by Kueue; add --queue NAME (a LocalQueue of the namespace)")
		}
		return nil, nil
	}
	if err := checkKueueName("--queue", f.queue, localQueueHint); err != nil {
		return nil, err
	}
	l := map[string]string{labels.KueueQueueName: f.queue}
	if f.priorityClass != "" {
		if err := checkKueueName("--priority-class", f.priorityClass, priorityClassHint); err != nil {
			return nil, err
		}
		l[labels.KueuePriorityClass] = f.priorityClass
	}
	return l, nil
}

// checkKueueName checks a name one of Kueue's labels carries: Kueue's webhook wants an object's
// name (a DNS subdomain) and the API server a label value (at most 63 characters), so a name
// failing either is refused here, naming what set it, rather than by the API server.
func checkKueueName(what, name, hint string) error {
	msgs := append(validation.IsDNS1123Subdomain(name), validation.IsValidLabelValue(name)...)
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%s %q is not a valid name: %s; %s", what, name, msgs[0], hint)
}

// heldByKueue is the Admitted condition of a job that waits for Kueue: one Kueue has not
// admitted, or has evicted, and which runs no pods. Else nil: a job that never was queued, is
// admitted, or still runs or has ended is shown by its own state.
func heldByKueue(j *v1beta1.MxJob) *metav1.Condition {
	if j.Status.State != "" && j.Status.State != v1beta1.StateSuspended {
		return nil
	}
	c := meta.FindStatusCondition(j.Status.Conditions, v1beta1.ConditionAdmitted)
	if c == nil || c.Status == metav1.ConditionTrue {
		return nil
	}
	return c
}

// waitReason is why Kueue holds a job back: the condition's message, which names the LocalQueue
// and what the job lacks ("waiting in LocalQueue team: couldn't assign flavors ..."), else its
// reason.
func waitReason(c *metav1.Condition) string {
	if c.Message != "" {
		return c.Message
	}
	return c.Reason
}

// admittedString is an Admitted condition in one line: "False, reason Pending: waiting in ...".
func admittedString(c *metav1.Condition) string {
	s := fmt.Sprintf("%s, reason %s", c.Status, c.Reason)
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s
}
