package owned

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/scheme"
)

// service is the owner's one Service "j" with the given selector, controlled by controller.
func service(selector string, controller types.UID) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"job": selector}}}
	if controller != "" {
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "j", UID: controller, Controller: new(true)}}
	}
	return s
}

func restoreSelector(got, want *corev1.Service) bool {
	if equality.Semantic.DeepEqual(got.Spec.Selector, want.Spec.Selector) {
		return false
	}
	got.Spec.Selector = want.Spec.Selector
	return true
}

func TestEnsure(t *testing.T) {
	refused := errors.New("admission refused")
	for name, tc := range map[string]struct {
		stored       *corev1.Service // nil: none
		patchErr     error
		wantErr      bool
		wantPatches  int
		wantSelector string // of the stored Service afterwards
		wantEvents   []string
	}{
		"missing: created":      {wantSelector: "j"},
		"as wanted: no write":   {stored: service("j", "owner-uid"), wantSelector: "j"},
		"drifted: patched back": {stored: service("everyone", "owner-uid"), wantPatches: 1, wantSelector: "j"},
		"patch refused": {stored: service("everyone", "owner-uid"), patchErr: refused, wantErr: true, wantPatches: 1,
			wantSelector: "everyone", wantEvents: []string{"Warning FailedUpdateService restoring Service j: admission refused"}},
		"another owner's: left alone": {stored: service("theirs", "other-uid"), wantErr: true, wantSelector: "theirs",
			wantEvents: []string{"Warning FailedCreateService creating Service j: Service j exists and this ConfigMap does not control it"}},
		"nobody's: left alone": {stored: service("theirs", ""), wantErr: true, wantSelector: "theirs",
			wantEvents: []string{"Warning FailedCreateService creating Service j: Service j exists and this ConfigMap does not control it"}},
	} {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme.New())
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			patches := 0
			cl := b.WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				patches++
				if tc.patchErr != nil {
					return tc.patchErr
				}
				return c.Patch(ctx, obj, patch, opts...)
			}}).Build()
			rec := events.NewFakeRecorder(10)
			o := Owner{Client: cl, Recorder: rec, Object: owner()}

			err := Ensure(context.Background(), o, service("j", "owner-uid"), restoreSelector)
			if (err != nil) != tc.wantErr {
				t.Errorf("Ensure: %v, want error %v", err, tc.wantErr)
			}
			if patches != tc.wantPatches {
				t.Errorf("%d patches, want %d", patches, tc.wantPatches)
			}
			var got corev1.Service
			if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "j"}, &got); err != nil {
				t.Fatal(err)
			}
			if got.Spec.Selector["job"] != tc.wantSelector {
				t.Errorf("stored selector %v, want job=%s", got.Spec.Selector, tc.wantSelector)
			}
			if diff := cmp.Diff(tc.wantEvents, recorded(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
