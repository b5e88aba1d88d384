package objectstore

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/webhooktest"
)

// FuzzObjectStoreAdmission checks the properties every kind's rules keep on generated stores.
func FuzzObjectStoreAdmission(f *testing.F) {
	for _, seed := range []string{"", "anonymous", "keys", "a longer seed for other shapes"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := webhooktest.Generate(data, []func() *v1alpha1.ObjectStore{
			func() *v1alpha1.ObjectStore { return store(nil) },
			func() *v1alpha1.ObjectStore { return store(func(s *v1alpha1.ObjectStore) { s.Spec.Anonymous = true }) },
		}, func(s *v1alpha1.ObjectStore) []any {
			return []any{&s.Name, &s.GenerateName, &s.Spec.Endpoint, &s.Spec.Region, &s.Spec.Bucket, &s.Spec.Addressing, &s.Spec.CABundle, &s.Spec.Anonymous, &s.Spec.Credentials}
		},
			webhooktest.Pick[v1alpha1.Addressing]("", v1alpha1.AddressingPath, v1alpha1.AddressingVirtualHost, "Dns"))
		webhooktest.CheckProperties(t, s, webhooktest.Rules[*v1alpha1.ObjectStore]{
			New:      func() *v1alpha1.ObjectStore { return &v1alpha1.ObjectStore{} },
			DeepCopy: func(o *v1alpha1.ObjectStore) *v1alpha1.ObjectStore { return o.DeepCopy() },
			Default:  Default, Create: Validate,
			Update:    func(_, o *v1alpha1.ObjectStore) field.ErrorList { return Validate(o) },
			Spec:      func(o *v1alpha1.ObjectStore) any { return o.Spec },
			Immutable: func(_, _ *v1alpha1.ObjectStore) field.ErrorList { return nil },
		})
	})
}
