package objectstore

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The node agents read a store's keys for whoever made the store (docs/design/object-stores.md),
// and may read that one Secret in every namespace. So whoever creates or changes a store that
// signs its requests is asked, by SubjectAccessReview, whether they may read the keys themselves:
// else a user who may not see the Secret could point the agents, with its keys, at an endpoint of
// their choice or copy the bucket into data they can read.
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// CreatorAccess refuses an ObjectStore whose requester may not get the Secret that holds its
// keys; an anonymous store asks nothing. c creates the review for the admission request's user.
func CreatorAccess(ctx context.Context, c client.Client, req admission.Request, s *v1alpha1.ObjectStore) (field.ErrorList, error) {
	if s.Spec.Anonymous {
		return nil, nil
	}
	ns := req.Namespace // the API server's, from the request's path
	if ns == "" {
		ns = s.Namespace
	}
	u := req.UserInfo
	q := access.Request{Verb: "get", Namespace: ns, Resource: "secrets", Name: v1alpha1.ObjectStoreSecretName, Core: true}
	p := specPath.Child("credentials", "secretName")
	allowed, why, err := admit.Review(ctx, c, u, q)
	if err != nil {
		return nil, fmt.Errorf("%w, as %s needs", err, p)
	}
	if allowed {
		return nil, nil
	}
	return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
		"%s may not %s%s, which holds the store's keys: the node agents would sign its requests with them on %s's behalf; the built-in edit and admin roles include it: ask an admin of namespace %s to bind one to %s, or make the store anonymous if its bucket is public",
		u.Username, q, why, u.Username, ns, u.Username))}, nil
}
