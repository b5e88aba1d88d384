package transform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/scheme"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// drivers is an API server holding objs whose Gets of CSIDrivers are counted.
func drivers(gets *int, objs ...client.Object) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			*gets++
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
}

func fqnTransform() *v1alpha1.Transform {
	tr := templated(func(*corev1.PodSpec) {})
	tr.Spec.Argument = v1alpha1.ArgFQN
	return tr
}

func TestFQNNeedsTheDataDriver(t *testing.T) {
	gets := 0
	check := newDriverCheck(drivers(&gets))
	errs, err := check.fqnAccess(context.Background(), fqnTransform())
	if err != nil {
		t.Fatal(err)
	}
	if got := webhooktest.Keys(errs); len(got) != 1 || got[0] != "spec.argument: Invalid value" {
		t.Fatalf("errors = %v, want one on spec.argument", got)
	}
	if msg := webhooktest.Messages(errs); !strings.Contains(msg, wire.DataDriver) || !strings.Contains(msg, "default argument") {
		t.Errorf("the refusal does not name the driver and the way out: %s", msg)
	}
	// A Transform that streams its bytes needs no driver, and costs no request.
	if errs, err := check.fqnAccess(context.Background(), templated(func(*corev1.PodSpec) {})); err != nil || len(errs) != 0 {
		t.Errorf("a bytes Transform: %v, %v", errs, err)
	}
	if gets != 1 {
		t.Errorf("gets = %d, want 1", gets)
	}
}

func TestFQNAdmittedWithTheDataDriverAndTheAnswerIsKeptAMinute(t *testing.T) {
	gets := 0
	now := time.Unix(1000, 0)
	check := newDriverCheck(drivers(&gets, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: wire.DataDriver}}))
	check.now = func() time.Time { return now }
	for range 3 {
		if errs, err := check.fqnAccess(context.Background(), fqnTransform()); err != nil || len(errs) != 0 {
			t.Fatalf("with the driver: %v, %v", errs, err)
		}
	}
	if gets != 1 {
		t.Errorf("gets within a minute = %d, want 1", gets)
	}
	now = now.Add(driverTTL)
	if _, err := check.fqnAccess(context.Background(), fqnTransform()); err != nil {
		t.Fatal(err)
	}
	if gets != 2 {
		t.Errorf("gets after a minute = %d, want 2", gets)
	}
}

func TestFQNRefusedWhenTheDriverCannotBeAskedFor(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errors.New("connection refused")
		},
	}).Build()
	_, err := newDriverCheck(c).fqnAccess(context.Background(), fqnTransform())
	if err == nil || !strings.Contains(err.Error(), "CSIDriver "+wire.DataDriver) {
		t.Fatalf("err = %v, want one naming the CSIDriver", err)
	}
}
