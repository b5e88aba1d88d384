package transform

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The manager creates transformer pods with its own rights; a template that runs the pod as a
// ServiceAccount, or mounts one's token, would lend the author that account unless the author
// may create such a pod themselves.
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// NewRules are Rules with the checks that ask the API server: the ServiceAccount check, whose
// SubjectAccessReviews c creates, and fqn's CSI driver, which r reads (uncached: the manager
// watches no CSIDrivers).
func NewRules(c client.Client, r client.Reader) admit.Rules[*v1alpha1.Transform] {
	driver := newDriverCheck(r)
	return Rules.WithAccess(c, func(ctx context.Context, c client.Client, req admission.Request, t *v1alpha1.Transform) (field.ErrorList, error) {
		errs, err := driver.fqnAccess(ctx, t)
		if err != nil || len(errs) > 0 {
			return errs, err
		}
		return ServiceAccountAccess(ctx, c, req, t)
	})
}

// ServiceAccountAccess refuses a template that gets the pod a ServiceAccount's identity or token
// (serviceAccountName, automountServiceAccountToken: true, a projected serviceAccountToken
// volume) unless the requester may create pods in the namespace, which is what Kubernetes asks
// of anyone who runs a pod as a ServiceAccount. The answer is a SubjectAccessReview created by c.
func ServiceAccountAccess(ctx context.Context, c client.Client, req admission.Request, t *v1alpha1.Transform) (field.ErrorList, error) {
	if t.Spec.PodTemplate == nil {
		return nil, nil
	}
	asks := serviceAccountFields(&t.Spec.PodTemplate.Spec)
	if len(asks) == 0 {
		return nil, nil
	}
	ns := req.Namespace // the API server's, from the request's path
	if ns == "" {
		ns = t.Namespace
	}
	u := req.UserInfo
	extra := map[string]authzv1.ExtraValue{}
	for k, v := range u.Extra {
		extra[k] = authzv1.ExtraValue(v)
	}
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra,
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: "create", Resource: "pods"},
	}}
	if err := c.Create(ctx, sar); err != nil {
		return nil, fmt.Errorf("asking the API server whether %s may create pods in namespace %s, as %s needs: %w", u.Username, ns, asks[0].what, err)
	}
	if sar.Status.Allowed {
		return nil, nil
	}
	why := ""
	if sar.Status.Reason != "" {
		why = " (" + sar.Status.Reason + ")"
	}
	var errs field.ErrorList
	for _, a := range asks {
		errs = append(errs, field.Forbidden(a.path, fmt.Sprintf(
			"%s gives the transformer a ServiceAccount's identity or token, which needs the right to create pods in namespace %s, and %s lacks it%s; remove it, or ask an admin for that right",
			a.what, ns, u.Username, why)))
	}
	return errs, nil
}

type serviceAccountField struct {
	path *field.Path
	what string
}

// serviceAccountFields are the fields of spec that give its pod a ServiceAccount's identity or
// token.
func serviceAccountFields(spec *corev1.PodSpec) []serviceAccountField {
	var out []serviceAccountField
	if spec.ServiceAccountName != "" {
		out = append(out, serviceAccountField{templateSpecPath.Child("serviceAccountName"), "serviceAccountName " + spec.ServiceAccountName})
	}
	if spec.DeprecatedServiceAccount != "" {
		out = append(out, serviceAccountField{templateSpecPath.Child("serviceAccount"), "serviceAccount " + spec.DeprecatedServiceAccount})
	}
	if spec.AutomountServiceAccountToken != nil && *spec.AutomountServiceAccountToken {
		out = append(out, serviceAccountField{templateSpecPath.Child("automountServiceAccountToken"), "automountServiceAccountToken: true"})
	}
	for j, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for k, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				out = append(out, serviceAccountField{templateSpecPath.Child("volumes").Index(j).Child("projected", "sources").Index(k).Child("serviceAccountToken"),
					"a projected serviceAccountToken"})
			}
		}
	}
	return out
}
