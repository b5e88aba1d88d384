package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/types"

	etlv1alpha1 "github.com/mlkube/mlkube/api/etl/v1alpha1"
)

// Target is what the agent needs to know of one Transform to move an object
// through it on this node.
type Target struct {
	Namespace, Name string
	Communication   etlv1alpha1.Communication
	Argument        etlv1alpha1.Argument
	ObjectTimeout   time.Duration
	// URL is the local transformer's base URL, "http://ip:port", and Pod its pod's name.
	URL, Pod string
	// Token is the credential the transformer expects (wire.HeaderTransformerToken), derived for
	// this Transform alone; empty for a transformer created before tokens, which gets no header.
	Token string
	// TokenKey is the key ID Token is derived with, from the node's status; UID is the
	// Transform's, part of what Token is derived from.
	TokenKey string
	UID      types.UID
}

// Key is the Transform's "namespace/name".
func (t Target) Key() string { return t.Namespace + "/" + t.Name }

// Resolver finds the local transformer of a Transform. Lookup fails with
// ErrUnknownTransform or a NotRunningError.
type Resolver interface {
	Lookup(ctx context.Context, namespace, name string) (Target, error)
}

// ErrUnknownTransform is a Transform that does not exist.
var ErrUnknownTransform = errors.New("unknown transform")

// NotRunningError is a Transform that exists but cannot take objects on this
// node now.
type NotRunningError struct{ Reason string }

func (e *NotRunningError) Error() string { return "transform is not running: " + e.Reason }

// TargetOf returns the Target of t on node, or a *NotRunningError saying why
// t cannot transform objects there.
func TargetOf(t *etlv1alpha1.Transform, node string) (Target, error) {
	if t.Spec.Stopped {
		return Target{}, &NotRunningError{Reason: "stopped"}
	}
	if s := t.Status.Stage; s != etlv1alpha1.StageRunning {
		reason := "stage " + string(s)
		if s == "" {
			reason = "not initialized yet"
		}
		if t.Status.Reason != "" {
			reason += ": " + t.Status.Reason
		}
		return Target{}, &NotRunningError{Reason: reason}
	}
	ns, ok := nodeStatus(t.Status.Nodes, node)
	switch {
	case !ok:
		return Target{}, &NotRunningError{Reason: fmt.Sprintf("no transformer on node %s", node)}
	case !ns.Ready || ns.IP == "":
		return Target{}, &NotRunningError{Reason: fmt.Sprintf("transformer %s on node %s is not ready", ns.Pod, node)}
	}
	port := ns.Port
	if port == 0 {
		port = etlv1alpha1.DefaultPort
	}
	// Status is written by the controller but readable and writable by others with access to
	// the status subresource: an address that does not parse must not reach a URL, where it once
	// panicked a worker and took the agent down.
	if _, err := netip.ParseAddr(ns.IP); err != nil || port < 1 || port > 65535 {
		return Target{}, &NotRunningError{Reason: fmt.Sprintf("transformer %s on node %s has an invalid address %q port %d in status", ns.Pod, node, ns.IP, port)}
	}
	return Target{
		Namespace:     t.Namespace,
		Name:          t.Name,
		Communication: communication(t.Spec.Communication),
		Argument:      t.Spec.Argument,
		ObjectTimeout: objectTimeout(t.Spec),
		URL:           "http://" + net.JoinHostPort(ns.IP, strconv.Itoa(int(port))),
		Pod:           ns.Pod,
		TokenKey:      ns.TokenKey,
		UID:           t.UID,
	}, nil
}

func nodeStatus(nodes []etlv1alpha1.NodeStatus, node string) (etlv1alpha1.NodeStatus, bool) {
	for _, n := range nodes {
		if n.Node == node {
			return n, true
		}
	}
	return etlv1alpha1.NodeStatus{}, false
}

// communication applies the webhook's default and normalisation again, so
// that an object admitted before the webhook ran still works.
func communication(c etlv1alpha1.Communication) etlv1alpha1.Communication {
	switch c {
	case "", "hpush://":
		return etlv1alpha1.DefaultCommunication
	case "hpull://", "io://", "ws://":
		return c[:len(c)-3]
	}
	return c
}

func objectTimeout(s etlv1alpha1.TransformSpec) time.Duration {
	if s.ObjectTimeout == nil || s.ObjectTimeout.Duration <= 0 {
		return etlv1alpha1.DefaultObjectTimeout
	}
	return s.ObjectTimeout.Duration
}
