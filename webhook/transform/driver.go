package transform

import (
	"context"
	"fmt"
	"sync"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
)

// An fqn transformer's data comes from the data.mlkube.io CSI volume, which the node agents'
// DaemonSet serves. Without the driver the pod would wait in ContainerCreating for ever; the
// webhook says so at create instead.
//
// +kubebuilder:rbac:groups=storage.k8s.io,resources=csidrivers,resourceNames=data.mlkube.io,verbs=get

// driverTTL is how long an answer about the driver is kept: a create costs the API server no
// extra request, and an install or removal of the driver is seen within a minute.
const driverTTL = time.Minute

// driverCheck tells whether the cluster has the data.mlkube.io CSIDriver, asking the API server
// at most once per driverTTL.
type driverCheck struct {
	r   client.Reader
	now func() time.Time

	mu      sync.Mutex
	asked   time.Time
	present bool
}

func newDriverCheck(r client.Reader) *driverCheck {
	return &driverCheck{r: r, now: time.Now}
}

// fqnAccess refuses an fqn Transform when the cluster has no data.mlkube.io driver.
func (d *driverCheck) fqnAccess(ctx context.Context, t *v1alpha1.Transform) (field.ErrorList, error) {
	if t.Spec.Argument != v1alpha1.ArgFQN {
		return nil, nil
	}
	ok, err := d.installed(ctx)
	if err != nil || ok {
		return nil, err
	}
	return field.ErrorList{field.Invalid(specPath.Child("argument"), t.Spec.Argument, fmt.Sprintf(
		"fqn needs the %s CSI driver, which this cluster does not have (docs/install.md#fqn: the node agents' DaemonSet serves it); use the default argument, which streams the bytes",
		wire.DataDriver))}, nil
}

func (d *driverCheck) installed(ctx context.Context) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.asked.IsZero() && d.now().Sub(d.asked) < driverTTL {
		return d.present, nil
	}
	err := d.r.Get(ctx, types.NamespacedName{Name: wire.DataDriver}, &storagev1.CSIDriver{})
	switch {
	case err == nil:
		d.present = true
	case apierrors.IsNotFound(err):
		d.present = false
	default:
		return false, fmt.Errorf("asking the API server for the CSIDriver %s, which fqn Transforms need: %w", wire.DataDriver, err)
	}
	d.asked = d.now()
	return d.present, nil
}
