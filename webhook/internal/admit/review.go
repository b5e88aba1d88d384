package admit

import (
	"context"
	"fmt"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mlkube/mlkube/internal/access"
)

// Review asks the API server, with a SubjectAccessReview that c creates, whether the admission
// request's user u may do q, as the agents would ask for them. It returns the answer and, for a
// refusal, the authorizer's reason in parentheses (or nothing); an error is no answer, which the
// caller turns into a refusal (the webhook fails closed).
func Review(ctx context.Context, c client.Client, u authnv1.UserInfo, q access.Request) (allowed bool, why string, err error) {
	sar := &authzv1.SubjectAccessReview{Spec: access.ReviewSpec(access.CallerOf(u), q)}
	if err := c.Create(ctx, sar); err != nil {
		return false, "", fmt.Errorf("asking the API server whether %s may %s: %w", u.Username, q, err)
	}
	if access.Allowed(sar.Status) {
		return true, "", nil
	}
	if sar.Status.Reason != "" {
		why = " (" + sar.Status.Reason + ")"
	}
	return false, why, nil
}
