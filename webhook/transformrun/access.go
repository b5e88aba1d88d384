package transformrun

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/etl/v1alpha1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// A run makes the nodes' agents use its Transforms, read its source and write its destination,
// through an API only the manager may call: RBAC on transformruns alone would let a user who may
// create runs do through the manager what the agents refuse them directly. So the creator is
// asked, by SubjectAccessReview, exactly what the agent asks a caller who does the same by hand
// (docs/datapath-rbac.md).
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// NewRules are Rules with the check of the creator's data path rights, whose
// SubjectAccessReviews c creates.
func NewRules(c client.Client) admit.Rules[*v1alpha1.TransformRun] {
	return Rules.WithAccess(c, CreatorAccess)
}

// The user-facing ClusterRoles that grant the data path's verbs (manifests/agent/user_roles.yaml),
// and the built-in roles they are aggregated into, which is what namespace admins bind.
const (
	roleUser   = "mlkube-datapath-user"
	roleViewer = "mlkube-datapath-viewer"
	// roleEdit: Kubernetes' edit role grants reading the namespace's ObjectStores and Secrets.
	roleEdit = "edit"
)

var aggregatedInto = map[string]string{roleUser: "edit and admin", roleViewer: "view, edit and admin", roleEdit: "admin"}

// need is one right a run's creator must hold, and the field of the run that needs it.
type need struct {
	path *field.Path
	q    access.Request
	role string // a ClusterRole that grants q, for the refusal
}

// needs are the rights a run in namespace ns asks of its creator, in the order the agent would
// check them: use of every stage of spec.transform, get (and list, for a prefix) of objects for
// the source, create of objects for the destination. A dry run needs the same: it previews a run
// its creator may start, and it reads the source and looks at the destination.
func needs(ns string, spec *v1alpha1.TransformRunSpec) []need {
	var out []need
	seen := map[string]bool{}
	for _, stage := range wire.SplitPipeline(spec.Transform) {
		if stage == "" || seen[stage] { // "": a copy, through no Transform
			continue
		}
		seen[stage] = true
		out = append(out, need{specPath.Child("transform"),
			access.Request{Verb: access.VerbUse, Namespace: ns, Resource: access.ResourceTransform, Name: stage}, roleUser})
	}
	objects := func(verb string) access.Request {
		return access.Request{Verb: verb, Namespace: ns, Resource: access.ResourceObjects}
	}
	src := specPath.Child("source")
	switch {
	case spec.Source.Prefix != "":
		src = src.Child("prefix")
	case len(spec.Source.Objects) > 0:
		src = src.Child("objects")
	case spec.Source.Template != "":
		src = src.Child("template")
	}
	if store := spec.Source.Store; store != "" {
		out = append(out, storeNeeds(ns, specPath.Child("source", "store"), store)...)
	} else {
		out = append(out, need{src, objects("get"), roleViewer})
		if spec.Source.Prefix != "" {
			out = append(out, need{src, objects("list"), roleViewer})
		}
	}
	if store := spec.Destination.Store; store != "" {
		return append(out, storeNeeds(ns, specPath.Child("destination", "store"), store)...)
	}
	return append(out, need{specPath.Child("destination", "prefix"), objects("create"), roleUser})
}

// storeNeeds are the rights a run that reads or writes ObjectStore store asks of its creator: the
// agents use the store with the namespace's keys, so its creator must be able to read both.
func storeNeeds(ns string, p *field.Path, store string) []need {
	return []need{
		{p, access.Request{Verb: "get", Namespace: ns, Resource: "objectstores", Name: store}, roleEdit},
		{p, access.Request{Verb: "get", Namespace: ns, Resource: "secrets", Name: v1alpha1.ObjectStoreSecretName, Core: true}, roleEdit},
	}
}

// CreatorAccess refuses a new run whose creator may not do by hand what the run would do for
// them, naming the field that needs each missing right and the role that grants it. Each right
// is a SubjectAccessReview created by c for the admission request's user, groups, UID and extra.
func CreatorAccess(ctx context.Context, c client.Client, req admission.Request, run *v1alpha1.TransformRun) (field.ErrorList, error) {
	ns := req.Namespace // the API server's, from the request's path
	if ns == "" {
		ns = run.Namespace
	}
	u := req.UserInfo
	var errs field.ErrorList
	for _, n := range needs(ns, &run.Spec) {
		allowed, why, err := admit.Review(ctx, c, u, n.q)
		if err != nil {
			return nil, fmt.Errorf("%w, as %s needs", err, n.path)
		}
		if allowed {
			continue
		}
		errs = append(errs, field.Forbidden(n.path, fmt.Sprintf(
			"%s may not %s%s, which the run's node agents would do on their behalf; the ClusterRole %s grants it, and the built-in %s include it: ask an admin of namespace %s to bind one of them to %s",
			u.Username, n.q, why, n.role, aggregatedInto[n.role], ns, u.Username)))
	}
	return errs, nil
}
