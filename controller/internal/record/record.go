// Package record emits the controllers' events.
package record

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// Event records a Normal event, or a Warning one, about obj; a nil recorder records nothing.
func Event(rec events.EventRecorder, obj runtime.Object, warning bool, reason, message string) {
	if rec == nil {
		return
	}
	typ := corev1.EventTypeNormal
	if warning {
		typ = corev1.EventTypeWarning
	}
	rec.Eventf(obj, nil, typ, reason, "Reconcile", "%s", message)
}
