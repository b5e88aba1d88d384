package webhook

import (
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/mlkube/mlkube/webhook/mxjob"
	"github.com/mlkube/mlkube/webhook/objectstore"
	"github.com/mlkube/mlkube/webhook/transform"
	"github.com/mlkube/mlkube/webhook/transformrun"
)

// Register serves the MxJob, Transform, TransformRun and ObjectStore webhooks on the manager's
// webhook server; with kueue set (Kueue's API is served) the MxJob webhook creates queued jobs
// suspended.
func Register(mgr ctrl.Manager, kueue bool) error {
	if err := mxjob.NewRules(mgr.GetClient(), kueue).Register(mgr); err != nil {
		return err
	}
	if err := transform.NewRules(mgr.GetClient(), mgr.GetAPIReader()).Register(mgr); err != nil {
		return err
	}
	if err := transformrun.NewRules(mgr.GetClient()).Register(mgr); err != nil {
		return err
	}
	return objectstore.NewRules(mgr.GetClient()).Register(mgr)
}
