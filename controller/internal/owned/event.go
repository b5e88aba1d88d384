package owned

import (
	corev1 "k8s.io/api/core/v1"
)

// Event is an event a plan decided to record about its owner.
type Event struct {
	Warning         bool
	Reason, Message string
}

// Event records a Normal event, or a Warning one, about the owner; a nil recorder records nothing.
func (o Owner) Event(warning bool, reason, message string) {
	if o.Recorder == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	o.Recorder.Eventf(o.Object, nil, typ, reason, "Reconcile", "%s", message)
}

// Record records each of a plan's events.
func (o Owner) Record(events []Event) {
	for _, e := range events {
		o.Event(e.Warning, e.Reason, e.Message)
	}
}
