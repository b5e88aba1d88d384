package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mlkube/mlkube/webhook/mxjob"
	"github.com/mlkube/mlkube/webhook/transform"
)

// Register serves the MxJob and Transform webhooks on the manager's webhook server.
func Register(mgr ctrl.Manager) error {
	if err := mxjob.Rules.Register(mgr); err != nil {
		return err
	}
	return transform.Rules.Register(mgr)
}
