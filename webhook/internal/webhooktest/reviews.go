package webhooktest

import (
	"context"

	authzv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/mlkube/mlkube/api/scheme"
)

// Reviewer is a client that answers SubjectAccessReviews with answer (allowed, or the error the
// API server would return), giving "no RBAC rule" as the reason of a refusal, and keeps every
// review it got in Reviews.
func Reviewer(answer func(authzv1.SubjectAccessReviewSpec) (bool, error)) (client.Client, *[]authzv1.SubjectAccessReviewSpec) {
	var got []authzv1.SubjectAccessReviewSpec
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authzv1.SubjectAccessReview)
			got = append(got, sar.Spec)
			allowed, err := answer(sar.Spec)
			sar.Status = authzv1.SubjectAccessReviewStatus{Allowed: allowed}
			if !allowed {
				sar.Status.Reason = "no RBAC rule"
			}
			return err
		},
	}).Build()
	return c, &got
}
