package wire

import "github.com/mlkube/mlkube/api/labels"

// Where the node agents run, as manifests/agent deploys them: the manager and kubectl etl find
// them by these, and the e2e suites reach their Service in AgentNamespace.
const (
	// AgentNamespace is the namespace of the node agents.
	AgentNamespace = "mlkube-datapath"
	// AgentPort is the port an agent serves on; its Service maps port 80 to it.
	AgentPort = 8080
)

// AgentLabels are the labels of the node agent pods, to select them by; a new map each call, so
// that no caller can change another's.
func AgentLabels() map[string]string {
	return map[string]string{labels.Name: "mlkube", labels.Component: "node-agent"}
}
