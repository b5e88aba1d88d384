package mxjob

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// explain adds what to do to the API errors users meet most.
func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%w; the cluster does not serve MxJobs: install mlkube (kubectl apply -f manifests/install.yaml)", err)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%w; see the namespace's jobs with 'kubectl mxjob list' (-A for all namespaces)", err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("%w; ask an administrator for access, or choose a namespace with -n", err)
	}
	return err
}
