package v1alpha1

import (
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
)

// Labels of transformer pods, after AIStore's ETL pod labels: the controller sets them and finds
// its pods by them, and so do the tests.
const (
	// LabelName is the Transform's name.
	LabelName = "etl.mlkube.io/name"
	// LabelNode is the node's name, or its NodeHash when the name is too long for a label value.
	LabelNode = "etl.mlkube.io/node"
)

// AnnotationTokenKey on a transformer pod is the ID of the cluster key its credential was derived
// with; the controller copies it into status.nodes[].tokenKey for the node agent.
const AnnotationTokenKey = "etl.mlkube.io/token-key"

// ConditionReady is True while every eligible node's transformer is ready.
const ConditionReady = "Ready"

// Reasons of a Transform's Ready condition and events.
const (
	ReasonStopped              = "Stopped"
	ReasonNodeLeft             = "NodeLeft"
	ReasonNodeJoined           = "NodeJoined"
	ReasonTransformerFailed    = "TransformerFailed"
	ReasonAllTransformersReady = "AllTransformersReady"
	ReasonNoEligibleNodes      = "NoEligibleNodes"
	ReasonInitializing         = "Initializing"
)

// NodeHashLength is the length of NodeHash, the node's part of a transformer pod's name.
const NodeHashLength = 8

// MaxNameLength keeps TransformerPodName, "<name>-<node hash>", within a 63-character DNS label;
// the webhook holds Transform names to it.
const MaxNameLength = 63 - 1 - NodeHashLength

// NodeHash is the short, stable, DNS-safe stand-in for a node name in pod names and label values.
func NodeHash(node string) string {
	h := fnv.New32a()
	h.Write([]byte(node))
	return fmt.Sprintf("%0*x", NodeHashLength, h.Sum32())
}

// TransformerPodName is the name of transform's transformer pod on node: <transform>-<node hash>.
func TransformerPodName(transform, node string) string {
	return transform + "-" + NodeHash(node)
}

// TransformerPort returns the port named DefaultPortName among a transformer container's ports,
// the one the agent talks to and the readiness probe checks, or nil.
func TransformerPort(ports []corev1.ContainerPort) *corev1.ContainerPort {
	for i := range ports {
		if ports[i].Name == DefaultPortName {
			return &ports[i]
		}
	}
	return nil
}
