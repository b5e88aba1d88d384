package mxjob

import (
	"context"
	"fmt"

	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/mlkube/mlkube/api/mxnet/v1beta1"
	"github.com/mlkube/mlkube/api/wire"
	"github.com/mlkube/mlkube/internal/access"
	"github.com/mlkube/mlkube/webhook/internal/admit"
)

// The workers of a job with a dataset read it as their ServiceAccount, which the agent asks RBAC
// about on every read. A worker whose ServiceAccount holds no data path role would only fail with
// 403s in its logs, after the job started; so a new job is refused instead, naming the binding to
// make (docs/datapath-rbac.md, "MxJob workers").
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// NewRules are Rules with the check of the workers' data path rights, whose
// SubjectAccessReviews c creates.
//
// With kueue set (Kueue's API is served), a job labelled kueue.x-k8s.io/queue-name is created
// suspended: it starts when Kueue admits it, not before.
func NewRules(c client.Client, kueue bool) admit.Rules[*v1beta1.MxJob] {
	r := Rules.WithAccess(c, WorkerAccess)
	if kueue {
		r.CreateDefaultFunc = QueuedByKueue
	}
	return r
}

// workerNeeds are the rights a worker reading ds in namespace ns asks of the agent, each with the
// field that needs it: use of every stage of the transform, get (and list, for a prefix) of
// objects.
func workerNeeds(ns string, ds *v1beta1.Dataset) []need {
	var out []need
	for _, stage := range wire.SplitPipeline(ds.Transform) {
		if stage != "" {
			out = append(out, need{datasetPath.Child("transform"),
				access.Request{Verb: access.VerbUse, Namespace: ns, Resource: access.ResourceTransform, Name: stage}})
		}
	}
	objects := func(verb string) access.Request {
		return access.Request{Verb: verb, Namespace: ns, Resource: access.ResourceObjects}
	}
	if ds.Prefix != "" {
		return append(out, need{datasetPath.Child("prefix"), objects("get")}, need{datasetPath.Child("prefix"), objects("list")})
	}
	return append(out, need{datasetPath.Child("template"), objects("get")})
}

// need is one right a worker must hold, and the field that needs it.
type need struct {
	path *field.Path
	q    access.Request
}

// WorkerAccess refuses a new job with a dataset whose workers' ServiceAccounts may not read it,
// naming the ServiceAccount, the right and the RoleBinding that grants it.
func WorkerAccess(ctx context.Context, c client.Client, req admission.Request, job *v1beta1.MxJob) (field.ErrorList, error) {
	ds := job.Spec.Dataset
	if ds == nil {
		return nil, nil
	}
	ns := req.Namespace // the API server's, from the request's path
	if ns == "" {
		ns = job.Namespace
	}
	role := "mlkube-datapath-viewer"
	if ds.Transform != "" {
		role = "mlkube-datapath-user" // the viewer may not use Transforms
	}
	var errs field.ErrorList
	for _, sa := range workerServiceAccounts(job) {
		caller := serviceAccountCaller(ns, sa)
		for _, n := range workerNeeds(ns, ds) {
			sar := &authzv1.SubjectAccessReview{Spec: access.ReviewSpec(caller, n.q)}
			if err := c.Create(ctx, sar); err != nil {
				return nil, fmt.Errorf("asking the API server whether ServiceAccount %s/%s may %s, as %s needs: %w", ns, sa, n.q, n.path, err)
			}
			if access.Allowed(sar.Status) {
				continue
			}
			errs = append(errs, field.Forbidden(n.path, fmt.Sprintf(
				"the workers run as ServiceAccount %s/%s, which may not %s, as reading the dataset through the node agents needs; an admin of namespace %s grants it with: kubectl -n %s create rolebinding %s-datapath --clusterrole=%s --serviceaccount=%s:%s (or set the workers' serviceAccountName to a ServiceAccount that holds it)",
				ns, sa, n.q, ns, ns, sa, role, ns, sa)))
			break // one refusal per ServiceAccount: the role named grants every right
		}
	}
	return errs, nil
}

// workerServiceAccounts are the ServiceAccounts the job's workers run as: their template's, or
// the namespace's default.
func workerServiceAccounts(job *v1beta1.MxJob) []string {
	var out []string
	for _, rs := range job.Spec.ReplicaSpecs {
		if typeOrDefault(rs.MxReplicaType) != v1beta1.ReplicaTypeWorker || rs.Template == nil {
			continue
		}
		sa := rs.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		out = append(out, sa)
	}
	return out
}

// serviceAccountCaller is who the API server says a token of ServiceAccount ns/sa is: its user
// name and groups, as TokenReview answers them for the agent (spelled here rather than taken from
// k8s.io/apiserver, which the manager does not otherwise link).
func serviceAccountCaller(ns, sa string) access.Caller {
	return access.Caller{
		Name:   "system:serviceaccount:" + ns + ":" + sa,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
	}
}
